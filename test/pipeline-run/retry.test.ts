import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalLog, getRun, startDev, submit } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { childrenOf, jobOf, type Dev } from './pipeline-support.js';

/** `retry:` on a pipeline job: each attempt is a child run of its own, and the run log says so. */

let dev: Dev;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

describe('job retry', () => {
  it('given a steps job that fails its first attempt and passes its second, then the run succeeds with two attempts of it', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'flaky.yaml': `name: flaky
jobs:
  call:
    retry:
      attempts: 3
      backoff: 1s
    steps:
      - name: call
        run: |
          if [ -e marker ]; then echo "attempt passed"; else touch marker; echo "attempt failed" >&2; exit 1; fi
  after:
    depends_on: [call]
    steps:
      - name: after
        run: echo "after ran"
`,
    });
    const runId = await submit(dev.url, dir, 'flaky.yaml');
    const log = await finalLog(dev.url, runId, 60_000);
    expect((await getRun(dev.url, runId)).status, log).toBe('succeeded');

    const children = await childrenOf(dev, runId);
    expect(children.map((child) => [jobOf(child), child.status])).toEqual([
      ['call', 'failed'],
      ['call', 'succeeded'],
      ['after', 'succeeded'],
    ]);
    expect(children[0]?.error).toBe('script exited 1');
    // The log tells the story: the failed attempt's output, the retry, the passing attempt.
    const retried = log.indexOf('  call: attempt 1 failed, retrying\n');
    expect(retried, log).toBeGreaterThan(log.indexOf('attempt failed\n'));
    expect(log.indexOf('attempt passed\n')).toBeGreaterThan(retried);
    expect(log).toMatch(/^ {2}call: succeeded$/m);
    expect(log).toContain('after ran\n');
    // The second attempt started after the 1s backoff.
    const [first, second] = children;
    expect((second?.createdAt.getTime() ?? 0) - (first?.finishedAt?.getTime() ?? Infinity)).toBeGreaterThanOrEqual(900);
  }, 120_000);

  it('given retry: 1 and a job that always fails, then it is tried twice, the run fails, and the jobs after it are skipped', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'broken.yaml': `name: broken
jobs:
  call:
    retry: 1
    steps:
      - name: call
        run: echo "still broken" >&2; exit 3
  after:
    depends_on: [call]
    steps:
      - name: after
        run: echo "after ran"
  last:
    depends_on: [after]
    steps:
      - name: last
        run: echo "last ran"
`,
    });
    const runId = await submit(dev.url, dir, 'broken.yaml');
    const log = await finalLog(dev.url, runId, 60_000);
    const run = await getRun(dev.url, runId);
    expect(run.status, log).toBe('failed');
    expect(run.error).toBe('job call failed');

    const children = await childrenOf(dev, runId);
    expect(children.map((child) => [jobOf(child), child.status])).toEqual([
      ['call', 'failed'],
      ['call', 'failed'],
    ]);
    expect(log).toContain('  call: attempt 1 failed, retrying\n');
    expect(log).not.toContain('attempt 2 failed, retrying');
    expect(log).toContain('  call: failed (script exited 3)\n');
    expect(log).toContain('  after: skipped, a job it depends on failed\n');
    expect(log).not.toContain('after ran');
    // Not followed through others either: a job skipped for a failure is no finished job.
    expect(log).toContain('  last: skipped, a job it depends on failed\n');
    expect(log).not.toContain('last ran');
  }, 120_000);
});
