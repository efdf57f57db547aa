import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/types.js';
import { settleRun } from './settle.js';

/**
 * Ends a run that has not ended, and its children (a pipeline's jobs) with it. Answers the runs it
 * cancelled, so the host can end the scripts of passes under way.
 */
export async function cancelRun(store: Store, runId: string, now: Date, reason = 'cancelled'): Promise<string[]> {
  const run = await store.getRun(runId);
  if (!run || TERMINAL_STATUSES.includes(run.status)) return [];
  await settleRun(store, run, { kind: 'cancelled', message: reason }, now);
  const cancelled = [runId];
  for (const child of await store.listRuns({ parentId: runId, limit: 10_000 })) {
    cancelled.push(...(await cancelRun(store, child.id, now, reason)));
  }
  return cancelled;
}
