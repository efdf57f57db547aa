import { RefusedError } from '../common/errors.js';
import { formatDuration } from '../common/duration.js';
import { newRunId } from '../common/ids.js';
import type { Store } from '../store/store.js';
import type { RerunOf, RunRecord, ScriptSource } from '../store/types.js';
import { cancelRun } from './cancel.js';

export interface Throttle {
  limit: number;
  periodMs: number;
  key: string;
  /** How many may start together after a quiet spell (default 1). */
  burst?: number;
  /** Refuse a run over the rate instead of queueing it. */
  drop?: boolean;
}

/** One run of a group at a time: later ones queue, replace the running one, or are skipped. */
export interface ConcurrencyRule {
  group: string;
  policy: 'queue' | 'cancel-running' | 'skip';
}

export interface Submission {
  /** The run's id when the caller derives it (a Run resource's uid); a new random one otherwise. */
  runId?: string;
  env: string;
  project: string;
  source: ScriptSource;
  input?: unknown;
  idempotencyKey?: string | null;
  throttle?: Throttle | null;
  concurrency?: ConcurrencyRule | null;
  lenient?: boolean;
  /** Whom the run is about (an order, a customer): a wait for an event takes only events of it. */
  subject?: string | null;
  /** Who submitted it, where the server knows (a gate with approvers refuses their answer). */
  submittedBy?: string | null;
  /** A rerun (engine/rerun.ts): the run it reran, and from which step. */
  rerunOf?: RerunOf | null;
  /** A rerun's start: the old run's journal before this position, and the outputs set there. */
  prefix?: { before: number; outputs: Record<string, string> };
}

export interface Admitted {
  run: RunRecord;
  created: boolean;
  /** Runs this submit cancelled (`cancel-running`): the host ends their passes. */
  cancelled: string[];
}

/**
 * Admits a run. A repeat of an idempotency key answers the first run. A throttled run gets the
 * next free slot under its key and waits as queued until then (or is dropped). A run with a
 * concurrency group joins the group's queue now, so arrival order is submit order.
 */
export async function submitRun(store: Store, submission: Submission, now: Date): Promise<Admitted> {
  const { source, throttle, concurrency, prefix } = submission;
  const admit = async (tx: Store): Promise<Admitted> => {
    const { run, created } = await tx.createRun({
      id: submission.runId ?? newRunId(submission.env, submission.project),
      project: submission.project,
      ...source,
      input: submission.input ?? null,
      idempotencyKey: submission.idempotencyKey ?? null,
      lenient: submission.lenient ?? false,
      subject: submission.subject ?? null,
      rerunOf: submission.rerunOf ?? null,
      submittedBy: submission.submittedBy ?? null,
    });
    const admitted: Admitted = { run, created, cancelled: [] };
    if (!created) return admitted;
    // In the transaction that makes the run: its first pass finds the copied prefix there.
    const { rerunOf } = submission;
    if (prefix && rerunOf && prefix.before > 0) {
      await tx.copyJournal(rerunOf.runId, run.id, prefix.before);
      if (Object.keys(prefix.outputs).length > 0) await tx.updateRun(run.id, { outputs: prefix.outputs });
      admitted.run = { ...run, outputs: prefix.outputs };
    }
    const refuse = async (reason: string): Promise<Admitted> => {
      admitted.cancelled.push(...(await cancelRun(tx, run.id, now, reason)));
      admitted.run = (await tx.getRun(run.id)) ?? run;
      return admitted;
    };
    if (concurrency) {
      const queue = await tx.leaseQueue(submission.project, concurrency.group);
      if (concurrency.policy === 'skip' && queue.length > 0) {
        return refuse(`skipped: concurrency group ${concurrency.group} is busy with ${queue[0] ?? ''}`);
      }
      if (concurrency.policy === 'cancel-running') {
        for (const other of queue) {
          admitted.cancelled.push(...(await cancelRun(tx, other, now, `replaced by ${run.id} (concurrency group ${concurrency.group})`)));
        }
      }
      await tx.acquireLease(submission.project, concurrency.group, run.id);
    }
    if (throttle) {
      const { at, admitted: inBudget } = await tx.takeThrottleSlot(submission.project, throttle.key, now, {
        intervalMs: throttle.periodMs / throttle.limit,
        burst: throttle.burst ?? 1,
        drop: throttle.drop ?? false,
      });
      // Refused, not made and cancelled: the transaction rolls back, so no run id is handed out.
      if (!inBudget) throw new RefusedError(`refused: over the rate of ${throttle.limit} per ${formatDuration(throttle.periodMs)} for ${throttle.key} (policy drop)`);
      if (at.getTime() > now.getTime()) {
        const awaiting = `throttle ${throttle.key} until ${at.toISOString()}`;
        await tx.updateRun(run.id, { wakeAt: at, awaiting });
        admitted.run = { ...run, wakeAt: at, awaiting };
      }
    }
    return admitted;
  };
  // A run with nothing but its own row is one statement: a transaction around it would only add
  // two round trips (begin, commit) to every submit.
  const alone = !concurrency && !throttle && !(prefix && prefix.before > 0);
  return alone ? admit(store) : store.transaction(admit);
}
