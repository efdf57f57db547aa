import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Executor } from '../../src/passes/executor.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The store as the executor's loop sees it, slowed down so that pokes land while a tick awaits it,
 * and counting how many ticks are under way at once.
 */
function watchedStore(store: Store) {
  const seen = { ticks: 0, inFlight: 0, mostAtOnce: 0 };
  const watched = Object.create(store) as Store;
  watched.dueSchedules = async (now) => {
    seen.ticks += 1;
    seen.inFlight += 1;
    seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.inFlight);
    try {
      await pause(5);
      return await store.dueSchedules(now);
    } finally {
      seen.inFlight -= 1;
    }
  };
  // The old loop let a poke in while it asked when work is next due, and started a second loop.
  watched.nextDueAt = async () => {
    await pause(30);
    return store.nextDueAt();
  };
  return { watched, seen };
}

describe('the executor loop', () => {
  let store: Store;
  let executor: Executor | null = null;

  beforeEach(async () => {
    store = await openPgliteStore();
  });

  afterEach(async () => {
    await executor?.stop();
    await store.close();
  });

  it('given pokes from everywhere at once, then one loop runs: one tick at a time, one poll interval apart when idle', async () => {
    const now = new Date();
    await store.putSchedule({ project: 'p', name: 'poll', everyMs: 3_600_000, cron: null, workflow: 'p.sh', interpreter: 'bash -eu', script: 'true', cwd: null, nextAt: now });
    const { watched, seen } = watchedStore(store);
    const pollMs = 40;
    // Runs are left alone: only the loop is under test.
    executor = new Executor(watched, { output: () => ({ stdout: 'inherit', stderr: 'inherit' }), schedules: true, pollMs, owns: () => Promise.resolve(false) });
    executor.start();
    for (let i = 0; i < 40; i++) {
      executor.poke();
      await pause(3 + (i % 11));
    }

    await pause(200);
    const before = seen.ticks;
    await pause(1000);
    const idleTicks = seen.ticks - before;

    expect(seen.mostAtOnce).toBe(1);
    // One loop polls about 1000 / 40 = 25 times in a second; every loop a poke added would double it.
    expect(idleTicks).toBeLessThanOrEqual(1000 / pollMs + 5);
    expect(await store.listRuns({ project: 'p' })).toHaveLength(1);
  });

  it('given a timer that comes due while a tick lists the due runs, then the loop goes round at once for it, not a poll interval later', async () => {
    const wakeAt = new Date('2030-01-01T00:00:00.000Z');
    let clock = wakeAt.getTime() - 10;
    await store.createRun({ id: 'dev:p:run-sleeper000000000', project: 'p', workflow: 'w.sh', interpreter: 'bash', script: 'true' });
    await store.updateRun('dev:p:run-sleeper000000000', { status: 'waiting', wait: { kind: 'timer', until: wakeAt.toISOString() }, wakeAt });
    // The clock passes the wake time just after the runs due before it were listed.
    const watched = Object.create(store) as Store;
    watched.listDueRuns = async (now, limit) => {
      const due = await store.listDueRuns(now, limit);
      clock = wakeAt.getTime() + 10;
      return due;
    };
    let started!: (id: string) => void;
    const passStarted = new Promise<string>((resolve) => (started = resolve));
    executor = new Executor(watched, {
      output: () => ({ stdout: 'inherit', stderr: 'inherit' }),
      now: () => new Date(clock),
      // An hour: the run must not wait for the next poll.
      pollMs: 3_600_000,
      runPass: (run) => {
        started(run.id);
        return Promise.resolve({ kind: 'succeeded' });
      },
    });
    executor.start();
    const stalled = new Promise<string>((resolve) => setTimeout(() => resolve('no pass: the loop waits for its next poll'), 20_000).unref());
    expect(await Promise.race([passStarted, stalled])).toBe('dev:p:run-sleeper000000000');
  });

  it('given more due runs than room for passes, then a tick claims as many as it has room for, together, and each run has one pass', async () => {
    const ids = Array.from({ length: 7 }, (_, i) => `dev:p:run-crowd${String(i).padStart(10, '0')}`);
    for (const id of ids) await store.createRun({ id, project: 'p', workflow: 'w.sh', interpreter: 'bash', script: 'true' });
    const claims = { asked: 0, unanswered: 0, mostUnanswered: 0 };
    const watched = Object.create(store) as Store;
    watched.startPass = async (id) => {
      claims.asked += 1;
      claims.mostUnanswered = Math.max(claims.mostUnanswered, ++claims.unanswered);
      try {
        return await store.startPass(id);
      } finally {
        claims.unanswered -= 1;
      }
    };
    const passes: string[] = [];
    let running = 0;
    let mostRunning = 0;
    executor = new Executor(watched, {
      output: () => ({ stdout: 'inherit', stderr: 'inherit' }),
      maxConcurrentPasses: 3,
      pollMs: 20,
      runPass: async (run) => {
        passes.push(run.id);
        mostRunning = Math.max(mostRunning, ++running);
        await pause(100);
        running -= 1;
        return { kind: 'succeeded' };
      },
    });
    executor.start();
    for (let i = 0; i < 100 && (await store.listRuns({ project: 'p', status: ['succeeded'] })).length < ids.length; i++) await pause(50);

    expect((await store.listRuns({ project: 'p', status: ['succeeded'] })).map((run) => run.id).sort()).toEqual(ids);
    expect([...passes].sort()).toEqual(ids);
    expect(mostRunning).toBe(3);
    // The first tick asked for three claims at once, not one after another.
    expect(claims.mostUnanswered).toBe(3);
  });
});
