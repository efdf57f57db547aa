import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/types.js';
import { settleRun } from './settle.js';

/** Ends a run that has not ended; the host ends its script if a pass is under way. */
export async function cancelRun(store: Store, runId: string, now: Date): Promise<boolean> {
  const run = await store.getRun(runId);
  if (!run || TERMINAL_STATUSES.includes(run.status)) return false;
  await settleRun(store, run, { kind: 'cancelled', message: 'cancelled' }, now);
  return true;
}
