import { newRunId } from '../common/ids.js';
import type { Store } from '../store/store.js';
import type { RunRecord, ScriptSource } from '../store/types.js';

export interface Throttle {
  limit: number;
  periodMs: number;
  key: string;
}

export interface Submission {
  env: string;
  project: string;
  source: ScriptSource;
  input?: unknown;
  idempotencyKey?: string | null;
  throttle?: Throttle | null;
  lenient?: boolean;
}

/**
 * Admits a run. A repeat of an idempotency key answers the first run; a throttled run is given the
 * next free slot under its key (slots `period / limit` apart), and waits as queued until then.
 */
export async function submitRun(store: Store, submission: Submission, now: Date): Promise<{ run: RunRecord; created: boolean }> {
  const { source, throttle } = submission;
  return store.transaction(async (tx) => {
    const { run, created } = await tx.createRun({
      id: newRunId(submission.env, submission.project),
      project: submission.project,
      ...source,
      input: submission.input ?? null,
      idempotencyKey: submission.idempotencyKey ?? null,
      lenient: submission.lenient ?? false,
    });
    if (!created || !throttle) return { run, created };
    const slot = await tx.takeThrottleSlot(submission.project, throttle.key, now, throttle.periodMs / throttle.limit);
    if (slot.getTime() <= now.getTime()) return { run, created };
    await tx.updateRun(run.id, { wakeAt: slot, awaiting: `throttle ${throttle.key} until ${slot.toISOString()}` });
    return { run: { ...run, wakeAt: slot }, created };
  });
}
