import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tickSchedules } from '../../src/engine/schedules.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';
import type { ScheduleRecord } from '../../src/store/types.js';

const t0 = new Date('2030-01-01T00:00:00.000Z');
const minute = (n: number): Date => new Date(t0.getTime() + n * 60_000);

describe('schedule ticks', () => {
  let store: Store;

  beforeEach(async () => {
    store = await openPgliteStore();
  });

  afterEach(async () => {
    await store.close();
  });

  const given = (extra: Partial<ScheduleRecord> = {}) =>
    store.putSchedule({ project: 'p', name: 'nightly', everyMs: 60_000, cron: null, workflow: 'n.sh', interpreter: 'bash -eu', script: 'true', cwd: null, nextAt: t0, ...extra });

  it('given the previous run still going, then the default skips the tick and overlap allow starts another', async () => {
    await given();
    const [first] = await tickSchedules(store, 'dev', t0);
    expect(await tickSchedules(store, 'dev', minute(1))).toEqual([]);
    expect((await store.listSchedules('p'))[0]).toMatchObject({ skipped: 1, lastRunId: first });

    await given({ nextAt: minute(2), overlap: 'allow' });
    const [second] = await tickSchedules(store, 'dev', minute(2));
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect((await store.getRun(first ?? ''))?.status).toBe('pending');
  });

  it("given a schedule input, then each run takes it; without one, each run's input is its tick", async () => {
    await given({ runner: { image: 'runner:2' } });
    const [ticked] = await tickSchedules(store, 'dev', t0);
    expect((await store.getRun(ticked ?? ''))?.input).toEqual({ schedule: 'nightly', tick: t0.toISOString() });
    expect((await store.getRun(ticked ?? ''))?.runner).toEqual({ image: 'runner:2' });

    await store.updateRun(ticked ?? '', { status: 'succeeded' });
    await given({ nextAt: minute(1), input: { region: 'eu' } });
    const [own] = await tickSchedules(store, 'dev', minute(1));
    expect((await store.getRun(own ?? ''))?.input).toEqual({ region: 'eu' });
  });

  it('given two executors ticking at once (two replicas, a leader stepping down), then each tick starts one run', async () => {
    await given();
    const started = await Promise.all([tickSchedules(store, 'dev', t0), tickSchedules(store, 'dev', t0), tickSchedules(store, 'dev', t0)]);
    expect(started.flat()).toHaveLength(1);
    expect(await store.listRuns({ project: 'p' })).toHaveLength(1);
    expect((await store.listSchedules('p'))[0]).toMatchObject({ nextAt: minute(1), lastRunId: started.flat()[0], skipped: 0 });

    // And a skipped tick is counted once.
    await Promise.all([tickSchedules(store, 'dev', minute(1)), tickSchedules(store, 'dev', minute(1))]);
    expect((await store.listSchedules('p'))[0]).toMatchObject({ nextAt: minute(2), skipped: 1 });
  });
});
