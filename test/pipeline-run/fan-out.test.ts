import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, finalLog, getRun, startDev, submit } from '../support/dev.js';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';
import { childrenOf, stamps, type Dev } from './pipeline-support.js';

/**
 * fan_out on spool dev: one child run per item, at most max_parallel of them at once, and the
 * items' results collected in order into the job's `results` output for the jobs after it.
 */

let dev: Dev;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

const ITEMS = ['a', 'b', 'c', 'd', 'e'];

/** Each item stamps its start and end (ns) into fan.log and prints `<item>-ok`, its result. */
const FAN = `name: fan
jobs:
  fan:
    fan_out:
      items: [${ITEMS.join(', ')}]
      max_parallel: 2
      steps:
        - name: work
          run: |
            echo "start $(date +%s%N) \${{ item }}" >> fan.log
            sleep 1
            echo "end $(date +%s%N) \${{ item }}" >> fan.log
            echo "\${{ item }}-ok"
  report:
    depends_on: [fan]
    steps:
      - name: report
        run: |
          echo 'results: \${{ steps.fan.output.results }}'
`;

/** The most intervals open at one instant (an end at the same instant as a start closes first). */
function maxOverlap(intervals: { start: number; end: number }[]): number {
  const events = intervals.flatMap(({ start, end }) => [
    { at: start, delta: 1 },
    { at: end, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const { delta } of events) {
    open += delta;
    most = Math.max(most, open);
  }
  return most;
}

describe('fan_out', () => {
  it('given 5 items and max_parallel 2, then at most 2 items run at once and a later job sees all 5 results', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fan.yaml': FAN });
    const runId = await submit(dev.url, dir, 'fan.yaml');
    const log = await finalLog(dev.url, runId, 90_000);
    expect((await getRun(dev.url, runId)).status, log).toBe('succeeded');

    // One child run per item, named by its index, and one for the report.
    const children = await childrenOf(dev, runId);
    expect(children.map((child) => child.workflow).sort()).toEqual([
      'fan.yaml#fan[0]',
      'fan.yaml#fan[1]',
      'fan.yaml#fan[2]',
      'fan.yaml#fan[3]',
      'fan.yaml#fan[4]',
      'fan.yaml#report',
    ]);
    for (const child of children) expect(child.status).toBe('succeeded');

    // Every item ran once; never more than two at the same time, and two did run together.
    const lines = stamps(join(dir, 'fan.log'));
    const intervals = ITEMS.map((item) => {
      const start = lines.filter((line) => line.what === 'start' && line.rest === item);
      const end = lines.filter((line) => line.what === 'end' && line.rest === item);
      expect(start, `${item} started once`).toHaveLength(1);
      expect(end, `${item} ended once`).toHaveLength(1);
      return { start: start[0]?.at ?? 0, end: end[0]?.at ?? 0 };
    });
    expect(maxOverlap(intervals)).toBe(2);

    // The results, in item order, reached the report job through the expression.
    const match = /^results: (.*)$/m.exec(log);
    if (!match?.[1]) throw new Error(`no 'results:' line in the log:\n${log}`);
    expect(JSON.parse(match[1])).toEqual(ITEMS.map((item) => `${item}-ok`));
    expect(log).toMatch(/^ {2}fan: succeeded$/m);
    expect(log).toMatch(/^ {2}report: succeeded$/m);
  }, 120_000);

  it('given the same document run by spool run, then the job after the fan_out sees each item\'s output, as under spool dev', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fan.yaml': FAN.replace('sleep 1', 'true') });

    const { code, output } = await spool(['run', 'fan.yaml', '--data-dir', join(dir, 'data')], { cwd: dir });

    expect(code, output).toBe(0);
    expect(output).toContain(`results: ${JSON.stringify(ITEMS.map((item) => `${item}-ok`))}`);
    for (const item of ITEMS) expect(output.split('\n')).toContain(`${item}-ok`);
  }, 120_000);

  it('given 101 items, then spool submit and spool run refuse the document with its line and column, and no run is made', async () => {
    const dir = tempDir();
    const lines = ['name: probe', 'jobs:', '  probe:', '    fan_out:', '      items:'];
    for (let i = 0; i < 101; i++) lines.push(`        - r${i}`);
    lines.push('      max_parallel: 2', '      steps:', '        - name: probe', '          run: echo ${{ item }}');
    writeFiles(dir, { 'probe.yaml': `${lines.join('\n')}\n` });
    // Line 106 is the 101st item, `        - r100`; column 11 is where its value starts.
    const refusal = 'spool: probe.yaml:106:11: fan_out takes at most 100 items, got 101\n';

    const submitted = await cli(dev.url, dir, ['submit', 'probe.yaml']);
    expect(submitted.output).toBe(refusal);
    expect(submitted.code).toBe(2);
    const ran = await spool(['run', 'probe.yaml'], { cwd: dir });
    expect(ran.output).toBe(refusal);
    expect(ran.code).toBe(2);
    // spool run refused it before opening its store: nothing was recorded under the directory.
    expect(existsSync(join(dir, '.spool'))).toBe(false);

    const runs = await dev.store.listRuns({ limit: 10_000 });
    expect(runs.filter((run) => run.workflow.startsWith('probe.yaml'))).toEqual([]);
  }, 60_000);
});
