import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { Resources } from '../../src/operator/resources.js';
import { removeTempDirs, spool, tempDir } from '../support/spool.js';
import {
  eventually,
  exposeOperator,
  givenUser,
  givenWorkflow,
  hostAddressForProxy,
  startCluster,
  type Cluster,
  type RunResource,
} from './support/cluster.js';

const NAMESPACE = 'team-many';
/** Of each kind: asleep, finished within the TTL, finished past it (over a page of 100, for `spool runs`). */
const EACH = 105;
const TTL_SECONDS = 3600;

/**
 * The small variant of bench/cluster-runs.mjs (docs/scaling.md): hundreds of Runs made in bulk,
 * their runs asleep or finished, under one leader. Its Run cache keeps a finished Run only as its
 * summary and one asleep without its input, retention still deletes the finished Runs past their TTL from that summary,
 * `spool runs` reads a page, not every Run, and a new leader's first look at every Run writes
 * nothing where nothing changed.
 */
describe('a cluster of many Runs', () => {
  let cluster: Cluster;
  let operator: Operator;
  let dir: string;
  let alice: string;
  const key = (group: string, i: number): string => `run-${group}${String(i).padStart(16 - group.length, '0')}`;
  const groups = { asleep: 'asleep', recent: 'recent', expired: 'old' } as const;

  beforeAll(async () => {
    cluster = await startCluster(NAMESPACE);
    await givenWorkflow(cluster, 'nap', 'nap.sh', 'spool wait signal never\n');
    // The runs, in SQL as a store holding them would have them: asleep, finished a minute ago, finished two hours ago.
    const admin = new pg.Client({ connectionString: cluster.postgres.url });
    await admin.connect();
    try {
      const operator = await cluster.startOperator('op-migrate');
      await operator.close();
      const rows = (group: string, offset: number) => Array.from({ length: EACH }, (_, i) => ({ id: `k8s:${NAMESPACE}:${key(group, i)}`, age: offset + i }));
      const insert = async (group: string, status: string, finishedAgo: string | null, offset: number): Promise<void> => {
        const made = rows(group, offset);
        await admin.query(
          `insert into runs (id, project, workflow, interpreter, script, status, wait, awaiting, finished_at, created_at, updated_at)
           select id, $2, 'nap/nap.sh', 'bash -eu', 'spool wait signal never', $3,
                  case when $3 = 'waiting' then '{"kind": "signal", "name": "never"}'::jsonb end,
                  case when $3 = 'waiting' then 'signal never' end,
                  case when $4::interval is not null then now() - $4::interval end,
                  now() - make_interval(secs => age), now() - make_interval(secs => age)
             from unnest($1::text[], $5::int[]) as t(id, age)`,
          [made.map((row) => row.id), NAMESPACE, status, finishedAgo, made.map((row) => row.age)],
        );
      };
      await insert(groups.asleep, 'waiting', null, 0);
      await insert(groups.recent, 'succeeded', '1 minute', EACH);
      await insert(groups.expired, 'succeeded', '2 hours', 2 * EACH);
    } finally {
      await admin.end();
    }
    // Their Runs, created many at once (a Run with its run label is one whose run is in the store).
    const made = Object.values(groups).flatMap((group) => Array.from({ length: EACH }, (_, i) => key(group, i)));
    // Each with an input and kubectl's annotation (a copy of the whole Run), which its cached form leaves out.
    const input = { orderId: 'ord_4242', note: 'x'.repeat(2000) };
    const create = async (name: string): Promise<void> => {
      await cluster.custom.createNamespacedCustomObject({
        group: 'hyperspool.dev',
        version: 'v1alpha1',
        namespace: NAMESPACE,
        plural: 'runs',
        body: {
          apiVersion: 'hyperspool.dev/v1alpha1',
          kind: 'Run',
          metadata: { name, labels: { 'hyperspool.dev/run': name }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { input } }) } },
          spec: { workflowRef: { name: 'nap' }, input },
        },
      });
    };
    for (let at = 0; at < made.length; at += 32) await Promise.all(made.slice(at, at + 32).map(create));
    operator = await cluster.startLeader('op-many', { host: hostAddressForProxy(), runTtlSeconds: TTL_SECONDS });
    await exposeOperator(cluster, operator);
    dir = tempDir('spool-many-runs-');
    cluster.kubectl('apply', '-f', 'config/rbac/user_roles.yaml');
    alice = await givenUser(cluster, 'alice', 'hyperspool-view', dir);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    removeTempDirs();
  });

  const gauge = async (metric: 'informerObjects' | 'informerSlimObjects'): Promise<number | undefined> =>
    (await operator.metrics[metric].get()).values.find((value) => value.labels.resource === 'runs')?.value;
  const runs = async (): Promise<RunResource[]> =>
    ((await cluster.custom.listNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: NAMESPACE, plural: 'runs' })) as { items: RunResource[] }).items;

  it('given Runs finished past their TTL, finished within it and asleep, then the expired ones are deleted, and the leader caches the rest lean (the finished ones as their summary)', async () => {
    await eventually(
      'the expired Runs deleted, the others with their status',
      async () => {
        const listed = await runs();
        const phases = new Map(listed.map((run) => [run.metadata.name, run.status?.phase]));
        const expired = [...phases.keys()].filter((name) => name.startsWith(`run-${groups.expired}`));
        const succeeded = [...phases.entries()].filter(([name, phase]) => name.startsWith(`run-${groups.recent}`) && phase === 'Succeeded');
        const waiting = [...phases.entries()].filter(([name, phase]) => name.startsWith(`run-${groups.asleep}`) && phase === 'Waiting');
        return expired.length === 0 && succeeded.length === EACH && waiting.length === EACH;
      },
      // A status written for each of 210 Runs and 105 deleted, by a leader sharing 2 loaded cores.
      150_000,
    );
    // The runs stay in the store: only their Runs went.
    expect((await operator.store.getRun(`k8s:${NAMESPACE}:${key(groups.expired, 0)}`))?.status).toBe('succeeded');
    // Every Run kept is cached lean: the finished ones as their summary, the ones asleep without their input and annotations.
    await eventually('the cache counted', async () => (await gauge('informerObjects')) === 2 * EACH && (await gauge('informerSlimObjects')) === 2 * EACH, 10_000);
  }, 200_000);

  it('given more Runs than a page, when spool runs lists them, then it shows the newest page, each by its Run, not every Run of the namespace', async () => {
    const result = await spool(['runs', '--json', '--kubeconfig', alice, '--context', 'alice', '-n', NAMESPACE], { cwd: dir, env: { SPOOL_SERVER: undefined } });
    expect(result.code, result.output).toBe(0);
    const rows = JSON.parse(result.output) as { name: string; id: string; status: string }[];
    // The store's newest 100 (the runs asleep were made last, each a second apart), in its order.
    expect(rows.map((row) => row.name)).toEqual(Array.from({ length: 100 }, (_, i) => key(groups.asleep, i)));
    expect(new Set(rows.map((row) => row.status))).toEqual(new Set(['waiting']));
    const finished = JSON.parse((await spool(['runs', '--json', '--status', 'succeeded', '--kubeconfig', alice, '--context', 'alice', '-n', NAMESPACE], { cwd: dir, env: { SPOOL_SERVER: undefined } })).output) as { name: string }[];
    expect(finished.map((row) => row.name)).toEqual(Array.from({ length: 100 }, (_, i) => key(groups.recent, i)));
  });

  it('given a new leader, then its first look at every Run and Workflow writes no status (the API server answers with its keys in another order than ours)', async () => {
    const patches = vi.spyOn(Resources.prototype, 'patchStatus');
    try {
      await operator.close();
      operator = await cluster.startLeader('op-many-again', { runTtlSeconds: TTL_SECONDS });
      const reconciled = async (): Promise<number> =>
        (await operator.metrics.reconciles.get()).values.filter((value) => value.labels.kind === 'Run').reduce((sum, value) => sum + value.value, 0);
      await eventually('every Run looked at', async () => (await reconciled()) >= 2 * EACH, 90_000);
      expect(patches.mock.calls.map(([, , name]) => name)).toEqual([]);
    } finally {
      patches.mockRestore();
    }
  }, 150_000);
});
