import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { removeTempDirs, tempDir } from '../support/spool.js';
import { freePort, listRuns, logOf, poll, startDevProcess, type DevProcess } from '../support/dev.js';

/**
 * bench/dev-load.mjs in small: sleepers and an event storm into handler runs at once on `spool dev`
 * with PostgreSQL. It checks what the bench cannot (correctness), never how fast: every event is
 * handled exactly once, no run is lost or stuck, and every sleeper wakes.
 */
const SLEEPERS = 30;
const ORDERS = 40;

const SLEEPER = 'spool sleep 2s\nspool step woke -- echo woke\n';
// The recipe users copy (handle each event once), not a second copy of it.
const ON_ORDER = readFileSync(new URL('../../examples/on-order.sh', import.meta.url), 'utf8');

describe('spool dev on PostgreSQL under sleepers and an event storm', () => {
  let postgres: TestPostgres;
  let dev: DevProcess;
  let dir: string;

  beforeAll(async () => {
    postgres = await startPostgres();
    dir = tempDir('spool-load-');
    writeFileSync(join(dir, 'sleeper.sh'), SLEEPER);
    writeFileSync(join(dir, 'on-order.sh'), ON_ORDER);
    dev = await startDevProcess(join(tempDir('spool-load-data-'), 'data'), await freePort(), 60_000, [
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

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${dev.url}/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };

  it('given sleepers and every order emitted twice (and one event id delivered twice), then each order ships exactly once, every run succeeds and every sleeper wakes', async () => {
    await api('PUT', '/handlers/orders', {
      eventType: 'order.placed',
      workflow: 'on-order.sh',
      interpreter: 'bash -eu',
      script: ON_ORDER,
      cwd: dir,
    });
    const sleepers = await Promise.all(
      Array.from(
        { length: SLEEPERS },
        async () =>
          (
            await api<{ run: { id: string } }>('POST', '/runs', {
              workflow: 'sleeper.sh',
              interpreter: 'bash -eu',
              script: SLEEPER,
              cwd: dir,
            })
          ).run.id,
      ),
    );
    // Each order twice, as two events (two runs; state add lets one ship), interleaved with the sleepers' passes.
    const handlerRuns = new Set<string>();
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        Array.from({ length: ORDERS }, async (_, order) => {
          const { runs } = await api<{ runs: string[] }>('POST', '/events', {
            type: 'order.placed',
            payload: { order },
          });
          for (const id of runs) handlerRuns.add(id);
        }),
      );
    }
    // The same event id twice is one run, not two.
    const first = await api<{ runs: string[] }>('POST', '/events', {
      type: 'order.placed',
      id: 'evt-again',
      payload: { order: 0 },
    });
    const again = await api<{ runs: string[] }>('POST', '/events', {
      type: 'order.placed',
      id: 'evt-again',
      payload: { order: 0 },
    });
    expect(again.runs).toEqual(first.runs);
    for (const id of first.runs) handlerRuns.add(id);
    expect(handlerRuns.size).toBe(2 * ORDERS + 1);

    const everyRun = [...sleepers, ...handlerRuns];
    const ended = await poll(
      'every run to end',
      async () => {
        const runs = await listRuns(dev.url);
        const mine = runs.filter((run) => everyRun.includes(run.id));
        return mine.length === everyRun.length &&
          mine.every((run) => ['succeeded', 'failed', 'cancelled'].includes(run.status))
          ? mine
          : null;
      },
      150_000,
    );
    expect(
      ended.filter((run) => run.status !== 'succeeded').map((run) => `${run.id} ${run.status} ${run.error ?? ''}`),
    ).toEqual([]);

    for (const id of sleepers) expect(await logOf(dev.url, id)).toBe('woke\n');
    const logs = await Promise.all([...handlerRuns].map((id) => logOf(dev.url, id)));
    for (let order = 0; order < ORDERS; order++) {
      const shipped = logs.filter((log) => log.includes(`shipped order ${order}\n`)).length;
      expect(shipped, `order ${order} shipped`).toBe(1);
    }
    const claims = await api<{ cells: unknown[] }>('GET', '/state/orders');
    expect(claims.cells).toHaveLength(ORDERS);
    expect(dev.output()).not.toMatch(/internal error|unhandled|uncaught/i);
  }, 240_000);
});
