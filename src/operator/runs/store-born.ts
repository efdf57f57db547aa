import type { V1OwnerReference } from '@kubernetes/client-node';
import type { RunRecord } from '../../store/types.js';
import { API_VERSION, type Handler, type Run, type Schedule } from '../api/generated.js';
import { LABELS, MANAGED_BY, runKey, workflowOf } from '../naming.js';

/** Where the Run resource of a run that began in the store (not from a Run someone applied) came from. */
export interface Parents {
  handler(namespace: string, name: string): Handler | undefined;
  schedule(namespace: string, name: string): Schedule | undefined;
  run(runId: string): Run | undefined;
}

/** What a store-born run's Run resource is called, labelled and owned by. */
export interface RunIdentity {
  name: string;
  labels: Record<string, string>;
  ownerReferences: V1OwnerReference[];
}

/** A DNS-1123 name of at most `max` characters from `base` and a unique `suffix`. */
function nameOf(base: string, suffix: string, max = 63): string {
  const clean = base.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  return `${clean.slice(0, max - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
}

const ownerRef = (kind: string, object: { metadata: { name?: string; uid?: string } }): V1OwnerReference[] =>
  object.metadata.uid ? [{ apiVersion: API_VERSION, kind, name: object.metadata.name ?? '', uid: object.metadata.uid, blockOwnerDeletion: false }] : [];

/**
 * Runs that Schedules, Handlers and parent runs start are named from what started them, as Jobs
 * are from a CronJob: `<schedule>-<tick in unix seconds>`, `<handler>-<8 characters of the run's
 * key>` (itself a hash of the event id and handler), `<parent Run>-<8 characters>`; they carry labels
 * naming their workflow, schedule, handler or parent, and an ownerReference to it, so
 * `kubectl get runs -l hyperspool.dev/schedule=nightly` works and deleting a Schedule cleans up its Runs.
 */
export function runIdentity(run: RunRecord, parents: Parents): RunIdentity {
  const key = runKey(run.id);
  const labels: Record<string, string> = { [LABELS.run]: key, [LABELS.managedBy]: MANAGED_BY, [LABELS.workflow]: workflowOf(run).name };
  const tick = scheduleTick(run);
  if (run.handler) {
    const handler = parents.handler(run.project, run.handler);
    return { name: nameOf(run.handler, key.slice(4, 12)), labels: { ...labels, [LABELS.handler]: run.handler }, ownerReferences: handler ? ownerRef('Handler', handler) : [] };
  }
  if (tick) {
    const schedule = parents.schedule(run.project, tick.schedule);
    const seconds = String(Math.floor(Date.parse(tick.at) / 1000));
    return { name: nameOf(tick.schedule, seconds), labels: { ...labels, [LABELS.schedule]: tick.schedule }, ownerReferences: schedule ? ownerRef('Schedule', schedule) : [] };
  }
  if (run.parentId) {
    const parent = parents.run(run.parentId);
    const parentName = parent?.metadata.name ?? runKey(run.parentId);
    return { name: nameOf(parentName, key.slice(4, 12), 253), labels: { ...labels, [LABELS.parent]: runKey(run.parentId) }, ownerReferences: parent ? ownerRef('Run', parent) : [] };
  }
  return { name: key, labels, ownerReferences: [] };
}

/** A schedule's run without an input of its own says which schedule and tick started it. */
function scheduleTick(run: RunRecord): { schedule: string; at: string } | null {
  const input = run.input as { schedule?: unknown; tick?: unknown } | null;
  if (input && typeof input.schedule === 'string' && typeof input.tick === 'string' && !Number.isNaN(Date.parse(input.tick))) {
    return { schedule: input.schedule, at: input.tick };
  }
  return null;
}
