import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, finalLog, getRun, startDev, submit, waitForRun } from '../support/dev.js';
import { processesMentioning, removeTempDirs, scriptCopies, tempDir, writeFiles } from '../support/spool.js';
import { childrenOf, stamps, until, waitForChild, type Dev } from './pipeline-support.js';

/**
 * "One deploy at a time" from the recipes: a pipeline-level concurrency group, with each of its
 * policies, and a group computed from the input. The deploy sleeps 2s instead of 4s, and stamps
 * when it starts and ends (in ns) into deploy.log beside the document, tagged with the run's input.
 * On a loaded machine one `spool submit` can take longer than a whole deploy, so each deploy also
 * holds before its sleep until the test creates its go-<tag> file: a run is still deploying when
 * the next submit arrives because the test says so, not because the submit was quick enough.
 */

let dev: Dev;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** The recipe's deploy-prod, with the policy and group given, 2s of deploying, and stamps. */
function deployProd(policy: string, group = 'deploy-prod'): string {
  const recipe = readFileSync(new URL('../pipeline/fixtures/deploy-prod.yaml', import.meta.url), 'utf8');
  expect(recipe).toContain('policy: queue');
  const step =
    'echo "deploy started $(date +%T)"; echo "start $(date +%s%N) ${{ input.tag }}" >> deploy.log; ' +
    'while [ ! -e "go-${{ input.tag }}" ]; do sleep 0.1; done; ' +
    'sleep 2; echo "end $(date +%s%N) ${{ input.tag }}" >> deploy.log; echo "deploy done $(date +%T)"';
  return recipe
    .replace('policy: queue', `policy: ${policy}`)
    .replace('group: deploy-prod', `group: ${JSON.stringify(group)}`)
    .replace(/run: .*/, `run: ${JSON.stringify(step)}`);
}

const input = (fields: Record<string, string>): string[] => ['--input', JSON.stringify(fields)];

/** Lets the deploys tagged `tags` past their hold. */
function go(dir: string, ...tags: string[]): void {
  writeFiles(dir, Object.fromEntries(tags.map((tag) => [`go-${tag}`, ''])));
}

/** When the run tagged `tag` stamped `what` (start|end) in dir/deploy.log. */
function stamp(dir: string, what: 'start' | 'end', tag: string): number | undefined {
  return stamps(join(dir, 'deploy.log')).find((line) => line.what === what && line.rest === tag)?.at;
}

describe('one deploy at a time', () => {
  it('given policy queue and two submits, then the second waits for the lease, starting no job, until the first ends', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'deploy-prod.yaml': deployProd('queue') });
    const first = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'first' }));
    await until('the first deploy to start', () => stamp(dir, 'start', 'first'), 60_000);
    go(dir, 'second');
    const second = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'second' }));

    // While the first deploys, the second shows as queued on the group and has started nothing.
    const queued = await waitForRun(dev.url, second, ['waiting'], 30_000);
    expect(queued.awaiting).toBe('lease deploy-prod');
    expect(queued.substate).toBe('queued');
    expect((await cli(dev.url, dir, ['runs'])).output).toMatch(new RegExp(`^${second}\\s+queued\\s+lease deploy-prod`, 'm'));
    // spool status says the same as spool runs (issue 28, item 13: it said waiting).
    expect((await cli(dev.url, dir, ['status', second])).output).toMatch(/^status {10}queued$/m);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await childrenOf(dev, second)).toEqual([]);
    expect((await getRun(dev.url, second)).awaiting).toBe('lease deploy-prod');
    expect(stamp(dir, 'start', 'second')).toBeUndefined();

    go(dir, 'first');
    const firstLog = await finalLog(dev.url, first, 60_000);
    expect((await getRun(dev.url, first)).status, firstLog).toBe('succeeded');
    const secondLog = await finalLog(dev.url, second, 60_000);
    expect((await getRun(dev.url, second)).status, secondLog).toBe('succeeded');
    expect(secondLog).toMatch(/^deploy started \d\d:\d\d:\d\d\ndeploy done \d\d:\d\d:\d\d$/m);

    // One at a time: the second deploy started after the first had ended.
    const firstEnd = stamp(dir, 'end', 'first') ?? Infinity;
    const secondStart = stamp(dir, 'start', 'second') ?? -Infinity;
    expect(secondStart).toBeGreaterThanOrEqual(firstEnd);
    expect((await childrenOf(dev, second)).map((child) => child.status)).toEqual(['succeeded']);
  }, 120_000);

  it('given policy cancel-running, then the second replaces the first: the first and its job end cancelled and its script is ended', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'deploy-prod.yaml': deployProd('cancel-running') });
    const first = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'first' }));
    const job = await waitForChild(dev, first, 'deploy', ['running']);
    await until('the first deploy to start', () => stamp(dir, 'start', 'first'), 60_000);
    // The job's script is running from its copy under .spool/scripts.
    const copy = join(scriptCopies(dir), job.id.replace(/[^a-z0-9-]/gi, '_'));
    expect(processesMentioning(copy).length).toBeGreaterThan(0);

    go(dir, 'second');
    const second = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'second' }));

    const replaced = await waitForRun(dev.url, first, ['succeeded', 'failed', 'cancelled'], 30_000);
    expect(replaced.status).toBe('cancelled');
    expect(replaced.error).toContain(`replaced by ${second}`);
    expect((await dev.store.getRun(job.id))?.status).toBe('cancelled');
    await until('the first deploy script to be ended', () => processesMentioning(copy).length === 0, 10_000);

    const secondLog = await finalLog(dev.url, second, 60_000);
    expect((await getRun(dev.url, second)).status, secondLog).toBe('succeeded');
    // Let the first past its hold: were its script alive, it would now write its end.
    go(dir, 'first');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(stamp(dir, 'end', 'first')).toBeUndefined();
    expect(stamp(dir, 'end', 'second')).toBeDefined();
    expect((await getRun(dev.url, first)).status).toBe('cancelled');
  }, 120_000);

  it('given policy skip, then a run submitted while the group is busy is dropped and the first carries on', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'deploy-prod.yaml': deployProd('skip') });
    const first = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'first' }));
    await waitForChild(dev, first, 'deploy', ['running']);
    go(dir, 'second');
    const second = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'second' }));

    const skipped = await getRun(dev.url, second);
    expect(skipped.status).toBe('cancelled');
    expect(skipped.error).toMatch(/^skipped: /);
    expect(skipped.error).toContain('deploy-prod');

    go(dir, 'first');
    const firstLog = await finalLog(dev.url, first, 60_000);
    expect((await getRun(dev.url, first)).status, firstLog).toBe('succeeded');
    expect(stamp(dir, 'end', 'first')).toBeDefined();
    expect(await childrenOf(dev, second)).toEqual([]);
    expect(stamp(dir, 'start', 'second')).toBeUndefined();

    // The group is free again once the first has ended: a new run is admitted and runs.
    go(dir, 'third');
    const third = await submit(dev.url, dir, 'deploy-prod.yaml', ...input({ tag: 'third' }));
    const thirdLog = await finalLog(dev.url, third, 60_000);
    expect((await getRun(dev.url, third)).status, thirdLog).toBe('succeeded');
  }, 120_000);

  it('given a group computed from the input, then two branches deploy side by side while the same branch queues', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'deploy.yaml': deployProd('queue', 'deploy-${{ input.branch }}') });
    const main = await submit(dev.url, dir, 'deploy.yaml', ...input({ branch: 'main', tag: 'main' }));
    const feature = await submit(dev.url, dir, 'deploy.yaml', ...input({ branch: 'feature', tag: 'feature' }));
    go(dir, 'main-again');
    const mainAgain = await submit(dev.url, dir, 'deploy.yaml', ...input({ branch: 'main', tag: 'main-again' }));

    // Both branches are deploying at once; a second main waits for main's group.
    await until(
      'main and feature to be deploying together',
      () => stamp(dir, 'start', 'main') && stamp(dir, 'start', 'feature'),
      60_000,
    );
    const queued = await waitForRun(dev.url, mainAgain, ['waiting'], 30_000);
    expect(queued.awaiting).toBe('lease deploy-main');
    expect(await childrenOf(dev, mainAgain)).toEqual([]);

    go(dir, 'main', 'feature');
    for (const id of [main, feature, mainAgain]) {
      const log = await finalLog(dev.url, id, 60_000);
      expect((await getRun(dev.url, id)).status, log).toBe('succeeded');
    }
    const [mainStart, mainEnd] = [stamp(dir, 'start', 'main') ?? 0, stamp(dir, 'end', 'main') ?? 0];
    const [featureStart, featureEnd] = [stamp(dir, 'start', 'feature') ?? 0, stamp(dir, 'end', 'feature') ?? 0];
    // Different groups: their deploys overlapped.
    expect(featureStart).toBeLessThan(mainEnd);
    expect(mainStart).toBeLessThan(featureEnd);
    // The same group: main-again waited for main.
    expect(stamp(dir, 'start', 'main-again') ?? 0).toBeGreaterThanOrEqual(mainEnd);
  }, 120_000);

  it('given examples/deploy-prod.yaml and a policy in the input that is none of the three, then the submit is refused in one line and no run is made', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'deploy-prod.yaml': readFileSync(new URL('../../examples/deploy-prod.yaml', import.meta.url), 'utf8') });
    const before = (await dev.store.listRuns({ limit: 10_000 })).length;

    const { code, output } = await cli(dev.url, dir, ['submit', 'deploy-prod.yaml', ...input({ policy: 'sometimes' })]);

    expect(output).toBe(
      "spool: deploy-prod.yaml: 'concurrency.policy' is 'sometimes' for this run's input (${{ input.policy || 'queue' }}); it must be one of queue, cancel-running, skip\n",
    );
    expect(code).toBe(2);
    expect(await dev.store.listRuns({ limit: 10_000 })).toHaveLength(before);
  }, 60_000);
});
