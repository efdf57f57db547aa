import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelRun } from '../../src/engine/cancel.js';
import type { Operator } from '../../src/operator/operator.js';
import {
  untilPhase,
  eventually,
  getRun,
  givenWorkflow,
  startCluster,
  startKubelet,
  whenRunCreated,
  type Cluster,
} from './support/cluster.js';

/**
 * The leader's caches hold what it still acts on: finished Jobs and pods stay on the API server
 * (the last pass's Job for kubectl logs, until its TTL or its Run goes) but not in its memory.
 */
describe("the operator's informer caches", () => {
  let cluster: Cluster;
  let operator: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-w');
    operator = await cluster.startLeader('op-watch');
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const cached = async (resource: string): Promise<number | undefined> =>
    (await operator.metrics.informerObjects.get()).values.find((value) => value.labels.resource === resource)?.value;

  it('given runs that finished, then their Jobs and pods are still on the API server but no longer in the caches (hyperspool_informer_objects)', async () => {
    const count = 5;
    await givenWorkflow(cluster, 'once', 'once.sh', 'spool step hi -- echo hi\n');
    const kubelet = startKubelet(cluster, operator.url);
    try {
      for (let i = 0; i < count; i++) await whenRunCreated(cluster, `once-${i}`, 'once');
      await eventually(
        'every run succeeded',
        async () =>
          (await operator.store.listRuns({ limit: 100 })).filter((run) => run.status === 'succeeded').length === count,
        90_000,
      );
    } finally {
      await kubelet.stop();
    }
    // The kubelet's part: each pass's pod says it ended.
    const pods = (await cluster.core.listNamespacedPod({ namespace: 'team-w' })).items;
    // At least one pod a run; more where a loaded machine lost a pass and it replayed.
    expect(pods.length).toBeGreaterThanOrEqual(count);
    for (const pod of pods) {
      await cluster.core.patchNamespacedPodStatus(
        { namespace: 'team-w', name: pod.metadata?.name ?? '', body: { status: { phase: 'Succeeded' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    const jobs = (await cluster.batch.listNamespacedJob({ namespace: 'team-w' })).items;
    // Every run's last pass's Job stays for kubectl logs (a loaded machine may lose and replay a pass, so there may be more).
    const finished = jobs.filter((job) =>
      job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True'),
    ).length;
    expect(finished).toBeGreaterThanOrEqual(1);

    await eventually(
      'no finished Job or pod cached',
      async () => (await cached('jobs')) === 0 && (await cached('pods')) === 0,
      20_000,
    );
    expect(await cached('runs')).toBe(count);
    expect(await cached('workflows')).toBe(1);
    // Still there for kubectl logs; the caches do not hold them.
    expect((await cluster.batch.listNamespacedJob({ namespace: 'team-w' })).items.length).toBeGreaterThanOrEqual(
      finished,
    );
    expect((await cluster.core.listNamespacedPod({ namespace: 'team-w' })).items).toHaveLength(pods.length);
  });

  it('given Runs asleep, then the sweep leaves them be (no reconcile of each every sweep), and a run changed behind the leader (cancelled through another replica) still shows at once', async () => {
    await givenWorkflow(cluster, 'nap', 'nap.sh', 'spool wait signal never\n');
    const kubelet = startKubelet(cluster, operator.url);
    try {
      for (let i = 0; i < 3; i++) await whenRunCreated(cluster, `nap-${i}`, 'nap');
      await eventually('every Run Waiting', async () => {
        for (let i = 0; i < 3; i++) if ((await getRun(cluster, `nap-${i}`)).status?.phase !== 'Waiting') return false;
        return true;
      }, 60_000);
    } finally {
      await kubelet.stop();
    }
    const reconciled = async (): Promise<number> =>
      (await operator.metrics.reconciles.get()).values.filter((value) => value.labels.kind === 'Run').reduce((sum, value) => sum + value.value, 0);
    // The last status writes come back as informer events, each one reconcile.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before = await reconciled();
    // Ten sweeps (every 200 ms here): each used to reconcile every unfinished Run.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await reconciled()) - before).toBeLessThan(3);

    const runId = (await getRun(cluster, 'nap-0')).status?.runId ?? '';
    await cancelRun(operator.store, runId, new Date(), 'cancelled through another replica');
    await untilPhase('run nap-0', () => getRun(cluster, 'nap-0'), 'Cancelled', 10_000);
  });
});
