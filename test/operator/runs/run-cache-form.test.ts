import { describe, expect, it } from 'vitest';
import type { Run } from '../../../src/operator/api/generated.js';
import { runCacheForm } from '../../../src/operator/runs/run-cache-form.js';
import { desiredRunStatus, statusPatch } from '../../../src/operator/runs/run-status.js';
import type { RunRecord } from '../../../src/store/types.js';

const RUN_ID = 'k8s:team:run-0000000000000abc';
const createdAt = new Date('2026-12-07T01:00:00Z');
const wakeAt = new Date('2027-01-06T01:00:00Z');

/** A run asleep, as the store has it. */
const record: RunRecord = {
  id: RUN_ID, project: 'team', workflow: 'remind/remind.sh', interpreter: 'bash', script: 'spool sleep 30d\n', input: { orderId: 'ord_4242' },
  subject: null, parentId: null, handler: null, idempotencyKey: null, status: 'waiting', awaiting: `timer ${wakeAt.toISOString()}`,
  wait: { kind: 'timer', until: wakeAt.toISOString() }, wakeAt, passes: 1, error: null, outputs: {}, lenient: false, cwd: null, runner: null,
  rerunOf: null, submittedBy: null, createdAt, updatedAt: createdAt, finishedAt: null,
};

/** The Run as the API server answers it: kubectl's annotation (a copy of the whole Run), its input, its owner, its managedFields. */
function served(labels: Record<string, string>): Run {
  const run: Run = {
    apiVersion: 'hyperspool.dev/v1alpha1',
    kind: 'Run',
    metadata: {
      name: 'remind-1', namespace: 'team', uid: 'c0ffee00-0000-4000-8000-000000000001', resourceVersion: '4242', generation: 1,
      creationTimestamp: createdAt, labels, finalizers: ['example.com/keep'],
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { input: { orderId: 'ord_4242', lines: 'x'.repeat(4000) } } }) },
      ownerReferences: [{ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', name: 'nightly', uid: 'c0ffee00-0000-4000-8000-000000000002' }],
      managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'hyperspool.dev/v1alpha1' }],
    },
    spec: { workflowRef: { name: 'remind' }, input: { orderId: 'ord_4242', lines: 'x'.repeat(4000) }, rerunOf: { name: 'remind-0', fromStep: 'fetch' }, ttlSecondsAfterFinished: 60 },
  };
  // The status its operator wrote, keys in the API server's (alphabetical) order.
  run.status = alphabetical(desiredRunStatus(run, record)) as Run['status'];
  return run;
}

function alphabetical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(alphabetical);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([key, each]) => [key, alphabetical(each)]));
}

describe('the form a Run takes in the leader\'s cache', () => {
  it('given an admitted unfinished Run, then the cache keeps what its reconcile reads and not its input, annotations or owners', () => {
    const run = served({ 'hyperspool.dev/run': 'run-0000000000000abc', 'hyperspool.dev/workflow': 'remind' });
    const lean = runCacheForm(run);
    expect(lean).toEqual({
      apiVersion: 'hyperspool.dev/v1alpha1',
      kind: 'Run',
      metadata: { name: 'remind-1', namespace: 'team', uid: run.metadata.uid, resourceVersion: '4242', generation: 1, labels: run.metadata.labels },
      spec: { workflowRef: { name: 'remind' }, rerunOf: { name: 'remind-0', fromStep: 'fetch' }, ttlSecondsAfterFinished: 60 },
      status: run.status,
    });
    expect(JSON.stringify(lean).length).toBeLessThan(JSON.stringify(run).length / 5);
    // Its reconcile compares the cached status with the one its run calls for: equal, nothing to write.
    expect(statusPatch(lean?.status, desiredRunStatus(lean as Run, record))).toBeNull();
    // A change of the run is still seen as one.
    expect(statusPatch(lean?.status, desiredRunStatus(lean as Run, { ...record, passes: 2 }))).toEqual({ passes: 2 });
  });

  it('given a Run not admitted yet, then the cache keeps it whole: its admission reads its input', () => {
    expect(runCacheForm(served({}))).toBeUndefined();
  });

  it('given an admitted Run whose run finished, then the cache keeps its summary', () => {
    const run = served({ 'hyperspool.dev/run': 'run-0000000000000abc' });
    const finishedAt = new Date('2026-12-07T02:00:00Z');
    run.status = desiredRunStatus(run, { ...record, status: 'succeeded', awaiting: null, wait: null, wakeAt: null, finishedAt });
    expect(runCacheForm(run)).toEqual({
      apiVersion: 'hyperspool.dev/v1alpha1',
      kind: 'Run',
      metadata: { name: 'remind-1', namespace: 'team', uid: run.metadata.uid, resourceVersion: '4242', labels: run.metadata.labels },
      spec: { workflowRef: { name: 'remind' }, ttlSecondsAfterFinished: 60 },
      status: { runId: RUN_ID, phase: 'Succeeded', finishedAt: finishedAt.toISOString() },
    });
  });
});
