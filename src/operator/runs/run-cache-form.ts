import type { Run } from '../api/generated.js';
import { LABELS } from '../naming.js';
import { finishedRunSummary } from './finished-run-summary.js';

/**
 * What the leader's Run cache keeps of a Run (the informer's slim): a finished one as its summary
 * (./finished-run-summary.ts), an admitted unfinished one as what its reconcile, the sweep and the
 * lookups by run read, and a Run not admitted yet whole (its admission reads its spec: input,
 * idempotency key, subject; there are few of them at a time).
 */
export function runCacheForm(run: Run): Run | undefined {
  return finishedRunSummary(run) ?? admittedRunForm(run);
}

/**
 * An admitted unfinished Run without what only its admission read (spec.input, which may be large)
 * and what nothing here reads (annotations, such as kubectl's last-applied-configuration, a copy
 * of the whole Run; ownerReferences; finalizers; creationTimestamp). Its status is kept whole: the
 * reconcile compares it, as a value, with the status its run calls for, and writes nothing when
 * they agree (docs/scaling.md).
 */
export function admittedRunForm(run: Run): Run | undefined {
  const { name, namespace, uid, resourceVersion, generation, labels } = run.metadata;
  if (!labels?.[LABELS.run]) return undefined;
  const spec = { ...run.spec };
  delete spec.input;
  return {
    apiVersion: run.apiVersion,
    kind: run.kind,
    metadata: { name, namespace, uid, resourceVersion, ...(generation !== undefined ? { generation } : {}), labels },
    spec,
    ...(run.status ? { status: run.status } : {}),
  };
}
