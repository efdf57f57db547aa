import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cancelRun } from '../../src/engine/cancel.js';
import type { Operator } from '../../src/operator/operator.js';
import { SqlStore } from '../../src/store/sql-store.js';
import type { RunStates } from '../../src/store/types.js';
import {
  untilPhase,
  eventually,
  getRun,
  givenWorkflow,
  startCluster,
  startKubelet,
  whenRunCreated,
  type Cluster,
  type RunResource,
} from './support/cluster.js';

/**
 * The leader's caches hold what it still acts on: finished Jobs and pods stay on the API server
 * (the last pass's Job for kubectl logs, until its TTL or its Run goes) but not in its memory; and
 * its sweep reads the runs that changed, not every run asleep.
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

  it('given runs asleep in the store for an hour, then a new leader reads them all once, its sweeps after read only the runs changed, and a change behind it is still seen, even one whose transaction began before a sweep read and committed after it', async () => {
    const SLEEPERS = 60;
    await givenWorkflow(cluster, 'asleep', 'asleep.sh', 'spool wait signal never\n');
    const ids = Array.from({ length: SLEEPERS }, (_, i) => `k8s:team-w:run-asleep${String(i).padStart(10, '0')}`);
    const admin = new pg.Client({ connectionString: cluster.postgres.url });
    await admin.connect();
    const full = vi.spyOn(SqlStore.prototype, 'listUnfinishedRunStates');
    const changed = vi.spyOn(SqlStore.prototype, 'listRunStatesChangedSince');
    try {
      // Written by a replica an hour ago (a Handler's runs): no write of theirs is recent.
      await admin.query(
        `insert into runs (id, project, workflow, interpreter, script, status, wait, created_at, updated_at)
         select id, 'team-w', 'asleep/asleep.sh', 'bash -eu', 'spool wait signal never', 'waiting',
                '{"kind": "signal", "name": "never"}'::jsonb, now() - interval '1 hour', now() - interval '1 hour'
           from unnest($1::text[]) as id`,
        [ids],
      );
      await operator.close();
      operator = await cluster.startLeader('op-sweep');
      // Its first sweep reads every unfinished run, so each of these store-born runs gets its Run.
      await eventually('a Run for every run asleep', async () => {
        const runs = (await cluster.custom.listNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-w', plural: 'runs' })) as { items: RunResource[] };
        return runs.items.filter((run) => ids.includes(run.status?.runId ?? '') && run.status?.phase === 'Waiting').length === SLEEPERS;
      }, 30_000);
      const fullReads = full.mock.calls.length;
      expect(fullReads).toBeGreaterThanOrEqual(1);

      const reads = (): RunStates[] => changed.mock.settledResults.flatMap((result) => (result.type === 'fulfilled' ? [result.value] : []));
      /** The reads of what changed, once there are `count` of them. */
      const untilReads = (count: number): Promise<RunStates[]> => eventually(`${count} reads of what changed`, () => Promise.resolve(reads().length >= count && reads()));
      const sweepsBefore = reads().length;
      const quiet = (await untilReads(sweepsBefore + 5)).slice(sweepsBefore);
      // None of the runs asleep was read again (each sweep reads what changed in its last seconds only).
      for (const read of quiet) expect(read.states.filter((state) => ids.includes(state.id))).toEqual([]);
      expect(full.mock.calls.length).toBe(fullReads);

      // A run cancelled through another replica: in the store only, which the next sweep reads.
      await cancelRun(operator.store, ids[0]!, new Date(), 'cancelled through another replica');
      await untilPhase('the first run asleep', () => getRun(cluster, ids[0]!.split(':')[2]!), 'Cancelled', 5_000);

      // A write whose transaction began before a sweep's read and commits after it: its updated_at
      // (its transaction's start) is older than that read, which the next read's overlap still covers.
      await admin.query('begin');
      await admin.query(`update runs set status = 'cancelled', error = 'cancelled slowly', finished_at = now(), updated_at = now() where id = $1`, [ids[1]]);
      await untilReads(changed.mock.calls.length + 1);
      await admin.query('commit');
      // Well before the next full read (a minute on): a sweep or two.
      await untilPhase('the second run asleep', () => getRun(cluster, ids[1]!.split(':')[2]!), 'Cancelled', 5_000);
      expect(full.mock.calls.length).toBe(fullReads);
    } finally {
      await admin.query('rollback').catch(() => undefined);
      await admin.end();
      full.mockRestore();
      changed.mockRestore();
    }
  });
});
