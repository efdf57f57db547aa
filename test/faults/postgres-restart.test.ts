import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { removeTempDirs, tempDir } from '../support/spool.js';
import {
  cli,
  cliOk,
  freePort,
  journalOf,
  listRuns,
  logOf,
  poll,
  startDevProcess,
  submit,
  waitForLog,
  waitForRun,
  type DevProcess,
} from '../support/dev.js';

const SCRIPTS = {
  // Sleeps through the outage and wakes after it: 10 s, long enough to be seen waiting on a loaded
  // machine (a 4 s sleep had ended before the test looked), short enough to wake in or near the outage.
  'sleeper.sh': 'spool step before -- echo before\nspool sleep 10s\nspool step after -- echo woke\n',
  // Waits on a signal sent while the database is down (retried until the server takes it).
  'waiter.sh': 'spool wait signal go --timeout 5m\nspool step got -- echo got\n',
  // In a step when the database goes: the step's result is recorded once the database is back.
  'busy.sh': 'spool step long -- sh -c "sleep 2; echo long done"\nspool step next -- echo next\n',
};

/**
 * PostgreSQL goes away under `spool dev --database-url` and comes back: the server says it is not
 * ready meanwhile, retries by itself, and every run finishes with each call recorded once.
 */
describe('spool dev --database-url across a PostgreSQL restart', () => {
  let postgres: TestPostgres;
  let dev: DevProcess;
  let dir: string;

  beforeAll(async () => {
    postgres = await startPostgres();
    dir = tempDir('spool-pg-restart-');
    for (const [file, script] of Object.entries(SCRIPTS)) writeFileSync(join(dir, file), script);
    dev = await startDevProcess(join(tempDir('spool-pg-restart-data-'), 'data'), await freePort(), 60_000, [
      '--database-url',
      postgres.url,
    ]);
  }, 120_000);

  afterAll(async () => {
    dev?.child.kill('SIGKILL');
    await dev?.exited;
    await postgres?.stop();
    removeTempDirs();
  });

  const ready = async (): Promise<number> => (await fetch(`${dev.url}/readyz`).catch(() => null))?.status ?? 0;

  it('given runs sleeping, waiting on a signal and in a step, when PostgreSQL restarts, then readiness goes false and back, and every run finishes with each call recorded once', async () => {
    expect(await ready()).toBe(200);
    const sleeper = await submit(dev.url, dir, 'sleeper.sh');
    const waiter = await submit(dev.url, dir, 'waiter.sh');
    await waitForRun(dev.url, sleeper, ['waiting']);
    await waitForRun(dev.url, waiter, ['waiting']);
    const busy = await submit(dev.url, dir, 'busy.sh');
    await waitForRun(dev.url, busy, ['running']);

    await postgres.down();
    await poll('readiness to go false', async () => (await ready()) === 503, 20_000);
    // While it is down, a signal is refused as unavailable, in one line, never taken and lost.
    const refused = await cli(dev.url, dir, ['signal', waiter, 'go', 'early']);
    expect(refused.code).not.toBe(0);
    expect(refused.output.trim().split('\n')).toEqual([
      'spool: the database cannot be reached right now; try again shortly',
    ]);
    // The step's result comes while the database is still away: that pass is lost, not failed.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await postgres.start();
    await poll('readiness back', async () => (await ready()) === 200, 30_000);
    await cliOk(dev.url, dir, ['signal', waiter, 'go', 'yes']);

    for (const id of [sleeper, waiter, busy]) {
      await waitForRun(dev.url, id, ['succeeded'], 60_000).catch(async (error: unknown) => {
        // What the runs and the server said, for whoever reads the failure.
        throw new Error(
          `${String(error)}\nruns: ${JSON.stringify(await listRuns(dev.url))}\nspool dev:\n${dev.output().slice(-4000)}`,
        );
      });
    }
    expect(await waitForLog(dev.url, sleeper, 'woke')).toMatch(/before\n(.|\n)*woke\n/);
    expect(await logOf(dev.url, waiter)).toContain('got\n');
    expect(await logOf(dev.url, busy)).toContain('next\n');
    for (const id of [sleeper, waiter, busy]) {
      const journal = await journalOf(dev.url, id);
      const keys = journal.map((entry) => `${entry.position}/${entry.kind}`);
      expect(new Set(keys).size).toBe(keys.length);
      const results = journal.filter((entry) => entry.kind === 'result').map((entry) => `${entry.verb} ${entry.name}`);
      expect(new Set(results).size).toBe(results.length);
    }
    expect(
      (await journalOf(dev.url, busy)).filter((entry) => entry.kind === 'result').map((entry) => entry.name),
    ).toEqual(['long', 'next']);
    // The busy run's first pass was lost to the outage and replayed; its step is recorded once.
    expect((await listRuns(dev.url)).find((run) => run.id === busy)?.passes).toBeGreaterThanOrEqual(2);
    expect(await logOf(dev.url, waiter)).not.toContain('early');
    expect(dev.output()).not.toMatch(/unhandled|uncaught|internal error/i);
  }, 180_000);
});
