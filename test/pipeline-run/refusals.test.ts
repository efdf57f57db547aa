import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDev } from '../support/dev.js';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';
import type { Dev } from './pipeline-support.js';

/**
 * A malformed pipeline never becomes a run: `spool submit` and `spool run` both refuse it with
 * exit 2 and one line naming the file, line and column, before anything is recorded. (The
 * messages themselves are covered by test/pipeline/parse-errors.test.ts; this is the CLI end.)
 */

let dev: Dev;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** The refund recipe with one piece changed: `from` must occur in it. */
function refundWith(from: string, to: string): string {
  const text = readFileSync(new URL('../pipeline/fixtures/refund.yaml', import.meta.url), 'utf8');
  if (!text.includes(from)) throw new Error(`refund.yaml has no ${from}`);
  return text.replace(from, to);
}

const cases: [string, string, string, string][] = [
  [
    'an unknown key',
    'unknown-key.yaml',
    refundWith('  escalate:\n    depends_on: [ask]', '  escalate:\n    depnds_on: [ask]'),
    "8:5: unknown key 'depnds_on' in job 'escalate' (expected one of depends_on, if, steps, script, approval, fan_out, retry, concurrency)",
  ],
  [
    'a bad expression',
    'bad-expression.yaml',
    refundWith(
      'if: ${{ steps.ask.output.timed_out && steps.ask_lead',
      'if: ${{ steps.ask.output.timed_out & steps.ask_lead',
    ),
    "27:40: bad expression ${{ steps.ask.output.timed_out & steps.ask_lead.output.timed_out }}: use '&&' for and",
  ],
  [
    'a cycle in depends_on',
    'cycle.yaml',
    refundWith('  ask:\n    approval:', '  ask:\n    depends_on: [refund]\n    approval:'),
    '4:18: cycle in depends_on: ask -> refund -> ask_lead -> escalate -> ask',
  ],
  [
    'an unknown job in an expression',
    'unknown-job.yaml',
    refundWith('|| !steps.ask_lead.output', '|| !steps.ask_led.output'),
    "21:45: unknown job 'ask_led' in expression ${{ !steps.ask.output.timed_out || !steps.ask_led.output.timed_out }} (did you mean 'ask_lead'?)",
  ],
  [
    // Found by test/pipeline/fuzz-documents.test.ts: the YAML library's warning about such a key was two more lines.
    'a list as a job name',
    'list-key.yaml',
    refundWith('  escalate:\n', '  ? [escalate]\n  :\n'),
    "7:5: job name '[ escalate ]' must be letters, digits and underscores, not starting with a digit, since expressions name jobs and read '-' as minus (try '__escalate__')",
  ],
];

describe('malformed pipelines are refused before a run is made', () => {
  it.each(cases)(
    'given %s, then spool submit and spool run exit 2 with one file:line:col line',
    async (_what, file, text, where) => {
      const dir = tempDir();
      writeFiles(dir, { [file]: text });
      const line = `spool: ${file}:${where}\n`;

      const submitted = await cli(dev.url, dir, ['submit', file]);
      expect(submitted.output).toBe(line);
      expect(submitted.code).toBe(2);
      const runs = await dev.store.listRuns({ limit: 10_000 });
      expect(runs.filter((run) => run.workflow.startsWith(file))).toEqual([]);

      const ran = await spool(['run', file], { cwd: dir });
      expect(ran.output).toBe(line);
      expect(ran.code).toBe(2);
      // Refused before its store was opened: nothing recorded in the directory.
      expect(existsSync(join(dir, '.spool'))).toBe(false);
    },
    60_000,
  );

  it('given the same recipe unchanged, then it is accepted (the cases above differ from it only where they say)', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': refundWith('timeout: 2d', 'timeout: 2d') });
    const submitted = await cli(dev.url, dir, ['submit', 'refund.yaml']);
    expect(submitted.code, submitted.output).toBe(0);
    const id = submitted.output.trim();
    expect((await dev.store.getRun(id))?.workflow).toBe('refund.yaml');
    await cli(dev.url, dir, ['cancel', id]);
  }, 60_000);
});
