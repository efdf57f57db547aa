import { createHash } from 'node:crypto';
import { derivedRunId } from '../common/ids.js';

/** The env part of run ids on a cluster; the project part is the namespace. */
export const CLUSTER_ENV = 'k8s';

export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  /** The run's key (`run-` and 16 characters): the last part of its id, safe as a label value. */
  run: 'hyperspool.dev/run',
  pass: 'hyperspool.dev/pass',
  workflow: 'hyperspool.dev/workflow',
  /** On Runs that a Schedule, a Handler or a parent run started. */
  schedule: 'hyperspool.dev/schedule',
  handler: 'hyperspool.dev/handler',
  parent: 'hyperspool.dev/parent',
  /** On a Run that reruns another (spec.rerunOf): the other Run's name. */
  rerunOf: 'hyperspool.dev/rerun-of',
  /** On an activity attempt's Job and pod: a hash of the activity's name, and the attempt number. */
  activity: 'hyperspool.dev/activity',
  attempt: 'hyperspool.dev/attempt',
  /**
   * On a warm pass pod's Job and pod (spec.warmPods), made ahead for whichever pass of its
   * definition comes: `idle` until the operator assigns it one, then `assigned` (WARM).
   */
  warm: 'hyperspool.dev/warm',
  /** On a warm pod's Job and pod: the pod settings it was made with (definitionKey), which a run's must equal. */
  definition: 'hyperspool.dev/definition',
} as const;

/** The values of a warm pod's LABELS.warm: its assignment flips it once, never back. */
export const WARM = { idle: 'idle', assigned: 'assigned' } as const;

/** On an activity attempt's pod: the activity's name itself (any text, so not a label). */
export const ACTIVITY_NAME_ANNOTATION = 'hyperspool.dev/activity-name';

export const MANAGED_BY = 'hyperspool';

/** A run's key, which names an archived run (one whose Run resource is gone) on a cluster. */
export const RUN_KEY = /^run-[a-z0-9]{16}$/;

/** `k8s:<namespace>:run-…` → `run-…`. */
export function runKey(runId: string): string {
  return runId.slice(runId.lastIndexOf(':') + 1);
}

export function runIdOf(namespace: string, key: string): string {
  return `${CLUSTER_ENV}:${namespace}:${key}`;
}

/** A Run resource someone created: its run id follows from its uid, so every replica derives the same. */
export function runIdForResource(namespace: string, uid: string): string {
  return derivedRunId(CLUSTER_ENV, namespace, 'Run', uid);
}

/** The longest Job name whose pods' `job-name` label (a label value) still fits: 63 characters. */
const JOB_NAME_MAX = 63;

/**
 * Pass N of a run is Job `<Run name>-p<N>` (`kubectl logs job/refund-7-p1`): one name per pass, so no
 * pass can get two Jobs. A Run name too long for it keeps its start and gains a hash of the whole
 * name, so two long names that share a start still differ.
 */
export function passJobName(runName: string, pass: number): string {
  const suffix = `-p${pass}`;
  if (runName.length + suffix.length <= JOB_NAME_MAX) return `${runName}${suffix}`;
  const hash = createHash('sha256').update(runName).digest('hex').slice(0, 8);
  // Cut where a DNS name may end: not after a '-' or a '.'.
  const start = runName.slice(0, JOB_NAME_MAX - suffix.length - hash.length - 1).replace(/[-.]+$/, '');
  return `${start}-${hash}${suffix}`;
}

/** An activity's name as a label value: any text a script names it by, hashed to 12 hex characters. */
export function activityKey(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 12);
}

/** Attempt N of an activity is Job `<run key>-a<name hash>-<N>`: one Job per attempt, never two. */
export function activityJobName(runId: string, name: string, attempt: number): string {
  return `${runKey(runId)}-a${activityKey(name)}-${attempt}`;
}

/**
 * A run's `workflow` on a cluster is `<Workflow name>/<filename>`: the file name still picks how it
 * runs, and the Workflow is known for the Run resources the operator creates for it.
 */
export function workflowOf(run: { workflow: string }): { name: string; filename: string } {
  const slash = run.workflow.indexOf('/');
  return slash < 0 ? { name: run.workflow, filename: run.workflow } : { name: run.workflow.slice(0, slash), filename: run.workflow.slice(slash + 1) };
}

/**
 * What a run's pass pods are made of (its Workflow's image, env, service account and template, as
 * the run pinned them when it started), as a label value: a warm pod serves only runs whose pods
 * would be made the same. Keys are sorted first: the store gives a run's settings back in its own
 * key order (jsonb), the Workflow in the API server's.
 */
export function definitionKey(podSettings: unknown): string {
  return createHash('sha256').update(sortedJson(podSettings ?? {})).digest('hex').slice(0, 16);
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, each]) => each !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, each]) => `${JSON.stringify(key)}:${sortedJson(each)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
