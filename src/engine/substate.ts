import { runsInProcess } from '../common/workflow-file.js';
import type { RunRecord } from '../store/types.js';

/**
 * What a run that is not under way is waiting for, in the seeds' words: `queued` for a run that
 * has not started its work (over a throttle's rate, or behind another run of its pipeline's
 * concurrency group: "the second run shows as queued"), `awaiting_lease` for a run waiting for a
 * lock ("a run waiting for a lease reports the awaiting_lease substate"), and `awaiting_<what>`
 * for the other waits. Null for a run that runs or has ended, and for one simply due.
 */
export type Substate =
  | 'queued'
  | 'awaiting_lease'
  | 'awaiting_timer'
  | 'awaiting_signal'
  | 'awaiting_event'
  | 'awaiting_activity'
  | 'awaiting_children';

export function substateOf(run: Pick<RunRecord, 'status' | 'awaiting' | 'wait' | 'interpreter'>): Substate | null {
  if (run.status === 'pending') return run.awaiting?.startsWith('throttle ') ? 'queued' : null;
  if (run.status !== 'waiting' || !run.wait) return null;
  switch (run.wait.kind) {
    case 'lease':
      // A pipeline's only lease is its concurrency group, taken before its first job.
      return runsInProcess(run) ? 'queued' : 'awaiting_lease';
    case 'child':
    case 'children':
      return 'awaiting_children';
    default:
      return `awaiting_${run.wait.kind}`;
  }
}
