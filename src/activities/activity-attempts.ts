import { wakeIfOver } from '../engine/wake.js';
import type { Store } from '../store/store.js';
import type { ActivityRecord, ActivityResult } from '../store/types.js';
import { nextAttemptAt } from './activity-runner.js';

/**
 * How one attempt of an activity ended: its command's result; already recorded by whoever heard
 * it (an attempt's pod reports to the operator's API); lost (its pod or Job went away without a
 * word); or left for the next executor (this one was abandoned).
 * Settling adds one more: its run had ended (cancelled), so no attempt runs or follows.
 */
export type AttemptEnd =
  | { kind: 'result'; result: ActivityResult }
  | { kind: 'recorded' }
  | { kind: 'lost'; message: string }
  | { kind: 'abandoned' };

/**
 * A lost attempt (a pod deleted, a node gone) is tried again whatever --attempts says, since the
 * command never answered; past this many beyond --attempts, the activity fails instead.
 */
export const MAX_LOST_ATTEMPTS = 5;

/**
 * Records how an attempt ended, once: only while `activity.attempt` is the attempt running, so a
 * second report of it, or a late one after it was superseded, lands nowhere (answers false). A
 * final result wakes the run waiting for it.
 */
export async function settleActivityAttempt(
  store: Store,
  activity: ActivityRecord,
  end: { kind: 'result'; result: ActivityResult } | { kind: 'lost' } | { kind: 'run-ended' },
  now: Date,
): Promise<boolean> {
  let landed: boolean;
  let final: boolean;
  if (end.kind === 'run-ended') {
    final = true;
    const result = { stdout: '', exitCode: 1, attempts: activity.attempt };
    landed = await store.finishActivityAttempt(activity.id, { result, final, attempt: activity.attempt });
  } else if (end.kind === 'lost') {
    final = activity.attempt >= activity.maxAttempts + MAX_LOST_ATTEMPTS;
    const result = { stdout: '', exitCode: 1, attempts: activity.attempt };
    landed = await store.finishActivityAttempt(activity.id, {
      result,
      final,
      attempt: activity.attempt,
      ...(final ? {} : { retryAt: now }),
    });
  } else {
    const retryAt = nextAttemptAt(activity, end.result, now);
    final = retryAt === null;
    landed = await store.finishActivityAttempt(activity.id, {
      result: end.result,
      final,
      attempt: activity.attempt,
      ...(retryAt ? { retryAt } : {}),
    });
  }
  if (landed && final) await wakeIfOver(store, activity.runId, now);
  return landed;
}
