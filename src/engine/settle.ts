import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import type { Suspension } from './pass.js';
import { wakeIfOver, wakeRunIfOver } from './wake.js';

export type RunOutcome =
  | { kind: 'suspended'; suspension: Suspension }
  | { kind: 'succeeded' }
  | { kind: 'failed'; message: string }
  | { kind: 'cancelled'; message: string }
  /** The pass ended without a word on how (its pod was lost): the run is dispatched again and replays. */
  | { kind: 'lost'; message: string };

/** What a pass whose script has ended comes to, wherever the script ran (here, or in a pod). */
export function scriptOutcome(
  pass: { failure: string | null; suspension: Suspension | null; lost?: string | null },
  exit: { code: number | null; signal: string | null },
): Extract<RunOutcome, { kind: 'suspended' | 'succeeded' | 'failed' | 'lost' }> {
  if (pass.failure) return { kind: 'failed', message: pass.failure };
  // The database went away mid-pass: whatever the script did after, the pass replays.
  if (pass.lost) return { kind: 'lost', message: pass.lost };
  if (pass.suspension) return { kind: 'suspended', suspension: pass.suspension };
  if (exit.code === 0) return { kind: 'succeeded' };
  return { kind: 'failed', message: exit.signal ? `script killed by ${exit.signal}` : `script exited ${exit.code ?? 1}` };
}

/**
 * Writes what a pass ended in onto its run, and answers the run as it now is (null if it is gone).
 * A run that ends gives up its leases (waking the next holder) and wakes a parent waiting on it; a
 * run that suspends is woken at once if what it waits for happened while it was suspending.
 */
export async function settleRun(store: Store, run: RunRecord, outcome: RunOutcome, now: Date): Promise<RunRecord | null> {
  if (outcome.kind === 'lost') {
    // Only a run still running is made due again: a cancelled one stays cancelled.
    await store.recoverInterruptedRuns(now, [run.id]);
    return store.getRun(run.id);
  }
  if (outcome.kind === 'suspended') {
    const { awaiting, wait, wakeAt } = outcome.suspension;
    // A run cancelled while its pass ran stays cancelled, whatever the pass ended in.
    const waiting = await store.updateRunUnlessCancelled(run.id, { status: 'waiting', awaiting, wait, wakeAt });
    if (!waiting) return store.getRun(run.id);
    return (await wakeRunIfOver(store, waiting, now)) ? store.getRun(run.id) : waiting;
  }
  const ended = await store.finishRun(run.id, {
    status: outcome.kind === 'succeeded' ? 'succeeded' : outcome.kind,
    error: outcome.kind === 'succeeded' ? null : outcome.message,
    awaiting: null,
    wait: null,
    wakeAt: null,
    finishedAt: now,
  });
  if (!ended) return store.getRun(run.id);
  for (const holder of ended.holders) await wakeIfOver(store, holder, now);
  if (run.parentId) await wakeIfOver(store, run.parentId, now);
  return ended.run;
}
