import { isDeepStrictEqual } from 'node:util';
import type { RunRecord, RunStatus as StoreStatus } from '../../store/types.js';
import type { Condition, Run, RunStatus } from '../api/generated.js';
import { formatDuration } from '../../common/duration.js';
import { substateOf } from '../../engine/substate.js';
import { apiTime } from '../api-time.js';
import type { PodTrouble } from '../passes/pod-trouble.js';

const PHASES: Record<StoreStatus, RunStatus['phase']> = {
  pending: 'Pending',
  running: 'Running',
  waiting: 'Waiting',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** The phases a Run ends in: nothing moves it after one of these. */
export function isFinishedPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Cancelled';
}

/**
 * The status a Run resource should show for its run in the store: small, and stable between
 * changes (times are the run's own; a condition's transition time moves only when it flips).
 */
export function desiredRunStatus(resource: Run, run: RunRecord, podTrouble?: PodTrouble): RunStatus {
  const phase = PHASES[run.status];
  const substate = substateOf(run);
  const generation = resource.metadata.generation;
  const succeeded: Condition['status'] = phase === 'Succeeded' ? 'True' : phase === 'Failed' || phase === 'Cancelled' ? 'False' : 'Unknown';
  const previous = resource.status?.conditions?.find((c) => c.type === 'Succeeded');
  const message = run.error ?? (run.awaiting ? `awaiting ${run.awaiting}` : `run ${phase.toLowerCase()}`);
  const condition: Condition = {
    type: 'Succeeded',
    status: succeeded,
    reason: phase,
    message,
    lastTransitionTime: previous?.status === succeeded ? previous.lastTransitionTime : apiTime(new Date()),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  // While the pass's pod cannot start its script, the Run says why (a condition of its own, so
  // `kubectl wait --for=condition=PodReady` and alerts can use it).
  const stuck = podTrouble && phase === 'Running' ? podTrouble : undefined;
  const previousPod = resource.status?.conditions?.find((c) => c.type === 'PodReady');
  const pod: Condition[] = stuck
    ? [
        {
          type: 'PodReady',
          status: 'False',
          reason: stuck.reason,
          message: stuck.message,
          lastTransitionTime: previousPod?.status === 'False' ? previousPod.lastTransitionTime : apiTime(new Date()),
          ...(generation !== undefined ? { observedGeneration: generation } : {}),
        },
      ]
    : [];
  return {
    runId: run.id,
    phase,
    ...(substate ? { substate } : {}),
    ...(run.awaiting ? { awaiting: run.awaiting } : {}),
    passes: run.passes,
    ...(run.error ? { message: run.error } : stuck ? { message: `pass ${run.passes}: ${stuck.summary}` } : {}),
    startedAt: apiTime(run.createdAt),
    ...(run.finishedAt ? { finishedAt: apiTime(run.finishedAt), duration: formatDuration(Math.max(0, run.finishedAt.getTime() - run.createdAt.getTime())) } : {}),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: [condition, ...pod],
  };
}

/**
 * A merge patch from the current status to the desired one, or null when they already agree.
 * Compared as values, not as JSON text: the API server answers a custom resource with its keys in
 * alphabetical order, so each condition's text differed from ours and every reconcile of every
 * unfinished Run sent a patch that changed nothing (a new leader's first look at 1,000 Runs took
 * 30 s of them; docs/scaling.md).
 */
export function statusPatch(current: RunStatus | undefined, desired: RunStatus): Record<string, unknown> | null {
  const patch: Record<string, unknown> = {};
  const keys = new Set([...Object.keys(current ?? {}), ...Object.keys(desired)]) as Set<keyof RunStatus>;
  for (const key of keys) {
    const want = desired[key];
    if (!isDeepStrictEqual(current?.[key], want)) patch[key] = want ?? null;
  }
  return Object.keys(patch).length > 0 ? patch : null;
}
