import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/common/json-log.js';
import { startArchivePruner } from '../../src/operator/runs/archive-pruner.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';
import { eventually } from '../support/eventually.js';

const DAY = 86_400_000;

describe("the archive's retention (--archive-retention)", () => {
  let store: Store;
  beforeAll(async () => {
    store = await openPgliteStore();
  }, 60_000);
  afterAll(async () => {
    await store?.close();
  });

  it('deletes the runs that finished longer ago than the retention, in batches, and keeps the rest; it logs how many went', async () => {
    const now = new Date();
    // More than one batch of old runs, so the pruner goes round until none is left.
    for (let i = 0; i < 520; i++) {
      await store.createRun({ id: `old-${i}`, project: 'p', workflow: 'wf', interpreter: 'bash', script: 'true' });
      await store.updateRun(`old-${i}`, { status: 'succeeded', finishedAt: new Date(now.getTime() - 2 * DAY) });
    }
    await store.createRun({ id: 'young', project: 'p', workflow: 'wf', interpreter: 'bash', script: 'true' });
    await store.updateRun('young', { status: 'failed', finishedAt: new Date(now.getTime() - DAY / 2) });
    await store.createRun({ id: 'waiting', project: 'p', workflow: 'wf', interpreter: 'bash', script: 'true' });
    await store.updateRun('waiting', { status: 'waiting' });
    const lines: string[] = [];
    const pruner = startArchivePruner({
      store,
      retentionMs: DAY,
      everyMs: 50,
      log: jsonLogger((line) => lines.push(line)),
    });
    try {
      await eventually('the old runs gone', async () => (await store.listRuns({ limit: 1000 })).length === 2, 30_000);
      expect((await store.listRuns({ limit: 1000 })).map((run) => run.id).sort()).toEqual(['waiting', 'young']);
      expect(
        lines
          .map((line) => JSON.parse(line) as { msg: string; runs?: number })
          .find((line) => line.msg === 'archived runs deleted')?.runs,
      ).toBe(520);
    } finally {
      await pruner.stop();
    }
  }, 60_000);
});
