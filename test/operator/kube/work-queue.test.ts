import { describe, expect, it } from 'vitest';
import { createWorkQueue } from '../../../src/operator/kube/work-queue.js';

/** A promise with its resolve function outside, to hold a reconcile in flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('work queue', () => {
  it('runs a key added several times while waiting only once', async () => {
    const blocker = gate();
    const runs: string[] = [];
    const queue = createWorkQueue({
      process: async (key) => {
        runs.push(key);
        if (key === 'blocker') await blocker.promise;
      },
    });
    queue.add('blocker');
    queue.add('a');
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.depth).toBe(2);
    blocker.open();
    await until(() => runs.length === 3 && queue.inFlight === 0);
    expect(runs).toEqual(['blocker', 'a', 'b']);
    await queue.shutdown();
  });

  it('never runs one key on two workers at once, but runs distinct keys in parallel', async () => {
    const active = new Map<string, number>();
    let most = 0;
    let mostForOneKey = 0;
    let runs = 0;
    const queue = createWorkQueue({
      workers: 4,
      process: async (key) => {
        const count = (active.get(key) ?? 0) + 1;
        active.set(key, count);
        mostForOneKey = Math.max(mostForOneKey, count);
        most = Math.max(most, [...active.values()].reduce((sum, n) => sum + n, 0));
        await new Promise((resolve) => setTimeout(resolve, 5));
        active.set(key, (active.get(key) ?? 1) - 1);
        runs += 1;
      },
    });
    for (let round = 0; round < 20; round += 1) {
      for (const key of ['a', 'b', 'c', 'd']) queue.add(key);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await until(() => queue.depth === 0 && queue.inFlight === 0);
    expect(mostForOneKey).toBe(1);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
    expect(runs).toBeGreaterThanOrEqual(4);
    await queue.shutdown();
  });

  it('runs a key added while in flight exactly once more afterwards', async () => {
    const first = gate();
    let runs = 0;
    const queue = createWorkQueue({
      workers: 2,
      process: async () => {
        runs += 1;
        if (runs === 1) await first.promise;
      },
    });
    queue.add('a');
    await until(() => queue.inFlight === 1);
    queue.add('a');
    queue.add('a');
    queue.add('a');
    // Not queued as waiting: a second worker must not pick it up while the first run is going.
    expect(queue.depth).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(1);
    first.open();
    await until(() => runs === 2 && queue.inFlight === 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(2);
    await queue.shutdown();
  });

  it('requeues a failing key with growing backoff and resets it after a success', async () => {
    const times: number[] = [];
    const retries: { attempt: number; delayMs: number }[] = [];
    let fail = true;
    const queue = createWorkQueue({
      backoff: { initialMs: 20, maxMs: 1000, jitter: 0 },
      process: (key) => {
        times.push(Date.now());
        if (fail && times.length <= 4) throw new Error(`boom ${key}`);
      },
      onError: (_error, _key, retry) => retries.push(retry),
    });
    queue.add('a');
    await until(() => times.length === 5, 3000);
    expect(retries.map((retry) => retry.delayMs)).toEqual([20, 40, 80, 160]);
    expect(retries.map((retry) => retry.attempt)).toEqual([1, 2, 3, 4]);
    const gaps = times.slice(1).map((time, index) => time - (times[index] ?? 0));
    gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(20 * 2 ** index - 2));
    // A success forgets the failures: the next failure starts again at the first delay.
    fail = true;
    times.length = 0;
    retries.length = 0;
    queue.add('a');
    await until(() => retries.length === 1);
    expect(retries[0]).toEqual({ attempt: 1, delayMs: 20 });
    await queue.shutdown();
  });

  it("nudge runs a key like add, but not while it waits for a failure's retry, and hands onError the error before", async () => {
    let runs = 0;
    let fail = true;
    const retries: { attempt: number; previous?: unknown }[] = [];
    const queue = createWorkQueue({
      // A retry far off: only a nudge could run the key before it.
      backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 },
      process: () => {
        runs += 1;
        if (fail) throw new Error(`boom ${runs}`);
      },
      onError: (_error, _key, { attempt, previous }) => retries.push({ attempt, previous }),
    });
    queue.nudge('a');
    await until(() => runs === 1 && queue.inFlight === 0);
    for (let i = 0; i < 5; i += 1) queue.nudge('a');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(1);
    expect(queue.depth).toBe(0);
    // A change still runs it at once; its failure is told with the one before.
    queue.add('a');
    await until(() => runs === 2 && queue.inFlight === 0);
    expect(retries).toEqual([{ attempt: 1 }, { attempt: 2, previous: new Error('boom 1') }]);
    // Once it succeeds, nudges run it again.
    fail = false;
    queue.add('a');
    await until(() => runs === 3 && queue.inFlight === 0);
    queue.nudge('a');
    await until(() => runs === 4);
    await queue.shutdown();
  });

  it('a nudge that comes while a key runs and fails does not run it before its retry', async () => {
    const inFlight = gate();
    let runs = 0;
    const queue = createWorkQueue({
      backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 },
      process: async () => {
        runs += 1;
        await inFlight.promise;
        throw new Error('boom');
      },
    });
    queue.add('a');
    await until(() => queue.inFlight === 1);
    // The sweep looks while the key's first reconcile is under way (not yet known to fail).
    queue.nudge('a');
    inFlight.open();
    await until(() => queue.inFlight === 0 && queue.delayed === 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(1);
    expect(queue.depth).toBe(0);
    await queue.shutdown();
  });

  it('a nudge that comes while a key runs and succeeds runs it once more', async () => {
    const inFlight = gate();
    let runs = 0;
    const queue = createWorkQueue({
      process: async () => {
        runs += 1;
        if (runs === 1) await inFlight.promise;
      },
    });
    queue.add('a');
    await until(() => queue.inFlight === 1);
    queue.nudge('a');
    inFlight.open();
    await until(() => runs === 2 && queue.inFlight === 0);
    await queue.shutdown();
  });

  it('a reconcile that asks for requeueAfterMs is run again then, and each end is told by its result', async () => {
    const results: string[] = [];
    let runs = 0;
    const queue = createWorkQueue({
      process: () => {
        runs += 1;
        return runs === 1 ? { requeueAfterMs: 30 } : undefined;
      },
      onResult: (key, result) => results.push(`${key}:${result}`),
    });
    queue.add('a');
    await until(() => runs === 1 && queue.inFlight === 0);
    expect(queue.delayed).toBe(1);
    await until(() => runs === 2 && queue.inFlight === 0);
    expect(results).toEqual(['a:requeue', 'a:success']);
    expect(queue.delayed).toBe(0);
    await queue.shutdown();
  });

  it('a terminal failure is not retried, nor run by a nudge; a change (add) runs it again', async () => {
    const results: string[] = [];
    const told: { attempt: number; terminal?: true }[] = [];
    let runs = 0;
    const queue = createWorkQueue({
      backoff: { initialMs: 1, maxMs: 1, jitter: 0 },
      terminal: (error) => error instanceof RangeError,
      process: () => {
        runs += 1;
        throw new RangeError('bad spec');
      },
      onResult: (_key, result) => results.push(result),
      onError: (_error, _key, { attempt, terminal }) => told.push({ attempt, ...(terminal ? { terminal } : {}) }),
    });
    queue.add('a');
    await until(() => runs === 1 && queue.inFlight === 0);
    queue.nudge('a');
    // With a 1 ms backoff, a retried key would have run many times over by now.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(runs).toBe(1);
    expect(queue.delayed).toBe(0);
    queue.add('a');
    await until(() => runs === 2 && queue.inFlight === 0);
    expect(results).toEqual(['terminal', 'terminal']);
    expect(told).toEqual([{ attempt: 1, terminal: true }, { attempt: 2, terminal: true }]);
    await queue.shutdown();
  });

  it('addAfter longer than a timer can hold (a sleep of 30 days) does not run the key at once', async () => {
    let runs = 0;
    const queue = createWorkQueue({ process: () => void (runs += 1) });
    queue.addAfter('a', 30 * 24 * 3600_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(0);
    expect(queue.delayed).toBe(1);
    await queue.shutdown();
  });

  it('addAfter delays a key and keeps the earliest of several delays', async () => {
    const runs: { key: string; at: number }[] = [];
    const queue = createWorkQueue({ process: (key) => void runs.push({ key, at: Date.now() }) });
    const start = Date.now();
    queue.addAfter('a', 200);
    queue.addAfter('a', 40);
    queue.addAfter('a', 300);
    expect(queue.delayed).toBe(1);
    expect(queue.depth).toBe(0);
    await until(() => runs.length === 1);
    expect((runs[0]?.at ?? 0) - start).toBeGreaterThanOrEqual(38);
    expect((runs[0]?.at ?? 0) - start).toBeLessThan(190);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(runs).toHaveLength(1);
    await queue.shutdown();
  });

  it('keys delayed to times of their own wait behind one timer, and each runs once, at its time, in order', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const runs: string[] = [];
    const queue = createWorkQueue({ process: (key) => void runs.push(key) });
    const before = timers();
    // A thousand Runs asleep until as many different times (a timer each held 80,000 at 100,000 Runs).
    for (let i = 999; i >= 0; i -= 1) queue.addAfter(`run-${String(i).padStart(3, '0')}`, 60_000 + i);
    // The same keys asked again sooner, over and over: the earliest wins, the rest is not kept.
    for (let round = 0; round < 3; round += 1) for (let i = 0; i < 1000; i += 1) queue.addAfter(`run-${String(i).padStart(3, '0')}`, 50 + i / 10 - round);
    expect(queue.delayed).toBe(1000);
    expect(timers() - before).toBeLessThanOrEqual(1);
    await until(() => runs.length === 1000, 5000);
    expect(runs).toEqual(Array.from({ length: 1000 }, (_, i) => `run-${String(i).padStart(3, '0')}`));
    expect(queue.delayed).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runs).toHaveLength(1000);
    await queue.shutdown();
  });

  it('shutdown waits for work in flight, drops waiting and delayed keys and ignores new ones', async () => {
    const blocker = gate();
    const runs: string[] = [];
    let finished = false;
    const queue = createWorkQueue({
      process: async (key) => {
        runs.push(key);
        if (key === 'slow') {
          await blocker.promise;
          finished = true;
        }
      },
    });
    queue.add('slow');
    queue.add('waiting');
    queue.addAfter('later', 10);
    let shutDown = false;
    const shutdown = queue.shutdown().then(() => {
      shutDown = true;
    });
    queue.add('new');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(shutDown).toBe(false);
    blocker.open();
    await shutdown;
    expect(finished).toBe(true);
    expect(runs).toEqual(['slow']);
    expect(queue.depth).toBe(0);
    expect(queue.delayed).toBe(0);
  });

  it('shutdown with drain runs the keys already waiting', async () => {
    const runs: string[] = [];
    const queue = createWorkQueue({
      process: async (key) => {
        runs.push(key);
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
    });
    queue.add('a');
    queue.add('b');
    queue.add('c');
    await queue.shutdown({ drain: true });
    expect(runs).toEqual(['a', 'b', 'c']);
  });
});
