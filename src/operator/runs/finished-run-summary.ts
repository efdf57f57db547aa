import type { Run } from '../api/generated.js';
import { LABELS } from '../naming.js';
import { finishedAt } from './retention.js';
import { isFinishedPhase } from './run-status.js';

/**
 * A Run admitted as a run (it has its run label) whose run has finished: nothing changes it any
 * more, so its reconcile has nothing left to do but retention's delete. (A Run refused at
 * admission has no run label: its reconcile still reads it whole.)
 */
export function isSettled(run: Run): boolean {
  return isFinishedPhase(run.status?.phase) && Boolean(run.metadata.labels?.[LABELS.run]);
}

/**
 * What the leader's cache keeps of a settled Run: what retention reads (when it finished, its
 * TTL, its Workflow, its labels: trigger, parent) and what finds it by its run (labels, name, uid,
 * runId). Its input, conditions and the rest stay on the API server: with a cluster's Runs mostly
 * finished, the whole objects were most of the leader's memory (docs/scaling.md). Undefined for a
 * Run not settled: the cache keeps it whole.
 */
export function finishedRunSummary(run: Run): Run | undefined {
  const status = run.status;
  if (!status || !isSettled(run)) return undefined;
  const { name, namespace, uid, resourceVersion, labels } = run.metadata;
  const ended = finishedAt(run);
  const ttl = run.spec.ttlSecondsAfterFinished;
  return {
    apiVersion: run.apiVersion,
    kind: run.kind,
    metadata: { name, namespace, uid, resourceVersion, labels },
    spec: { workflowRef: { name: run.spec.workflowRef.name }, ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}) },
    status: { runId: status.runId, phase: status.phase, ...(ended ? { finishedAt: ended.toISOString() } : {}) },
  };
}
