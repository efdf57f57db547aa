import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { removeTempDirs, spool, tempDir, type SpoolResult } from '../support/spool.js';
import {
  eventually,
  exposeOperator,
  givenUser,
  hostAddressForProxy,
  startCluster,
  startKubelet,
  whenRunCreated,
  type Cluster,
} from './support/cluster.js';

const GROUP = { group: 'hyperspool.dev', version: 'v1alpha1' };
type Listed = {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { runId?: string; phase?: string };
};

/**
 * Runs that clean up after themselves: the operator deletes finished Run resources past their TTL
 * or beyond their Handler's history limits, as the Job and CronJob controllers do, and the runs
 * stay in PostgreSQL, where the CLI still finds them.
 */
describe('retention of Run resources (ttlSecondsAfterFinished, history limits)', () => {
  let cluster: Cluster;
  let operator: Operator;
  let kubelet: { stop(): Promise<void> };
  let alice: string;
  let dir: string;

  beforeAll(async () => {
    cluster = await startCluster('team-r');
    // The operator's default keeps Runs an hour: longer than this file runs. A run that left the
    // store (below) is seen by a full sweep, every minute unless set: every 2 s here.
    operator = await cluster.startLeader('op-retention', { host: hostAddressForProxy(), runTtlSeconds: 3600, fullSweepEveryMs: 2_000 });
    await exposeOperator(cluster, operator);
    dir = tempDir('spool-retention-');
    cluster.kubectl('apply', '-f', 'config/rbac/user_roles.yaml');
    alice = await givenUser(cluster, 'alice', 'hyperspool-edit', dir);
    kubelet = startKubelet(cluster, operator.url);
  }, 180_000);

  afterAll(async () => {
    await kubelet?.stop();
    await cluster?.stop();
    removeTempDirs();
  });

  const as = (...args: string[]): Promise<SpoolResult> =>
    spool([...args, '--kubeconfig', alice, '--context', 'alice', '-n', 'team-r'], {
      cwd: dir,
      env: { SPOOL_SERVER: undefined },
    });
  const ok = async (...args: string[]): Promise<string> => {
    const result = await as(...args);
    if (result.code !== 0) throw new Error(`spool ${args.join(' ')} exited ${String(result.code)}:\n${result.output}`);
    return result.output;
  };
  const workflow = (name: string, script: string, ttl?: number) =>
    cluster.custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: 'team-r',
      plural: 'workflows',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name },
        spec: { filename: `${name}.sh`, script, ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}) },
      },
    });
  const runs = async (selector?: string): Promise<Listed[]> =>
    (
      (await cluster.custom.listNamespacedCustomObject({
        ...GROUP,
        namespace: 'team-r',
        plural: 'runs',
        ...(selector ? { labelSelector: selector } : {}),
      })) as { items: Listed[] }
    ).items;
  const succeeded = (runId: string) =>
    eventually(
      `${runId} to finish`,
      async () => ['succeeded', 'failed'].includes((await operator.store.getRun(runId))?.status ?? ''),
      60_000,
    );

  it("given a Workflow's ttlSecondsAfterFinished, when its run finishes, then the Run goes and the operator's default keeps the other; runs --all, status, logs and journal still answer for it", async () => {
    await workflow('brief', 'spool step hello -- echo hello\n', 1);
    await workflow('kept', 'spool step hello -- echo kept\n');
    const brief = await whenRunCreated(cluster, 'brief-1', 'brief');
    const kept = await whenRunCreated(cluster, 'kept-1', 'kept');
    const briefId = await eventually(
      'brief-1 admitted',
      async () => (await runs()).find((run) => run.metadata.name === 'brief-1')?.status?.runId,
    );
    const keptId = await eventually(
      'kept-1 admitted',
      async () => (await runs()).find((run) => run.metadata.name === 'kept-1')?.status?.runId,
    );
    await succeeded(briefId);
    await succeeded(keptId);
    // Deleted about a second after it finished; the other Run is still there once it has gone.
    await eventually(
      'brief-1 deleted',
      async () => !(await runs()).some((run) => run.metadata.name === 'brief-1'),
      30_000,
    );
    expect((await runs()).map((run) => run.metadata.name)).toContain('kept-1');
    expect(brief.metadata.uid).not.toBe(kept.metadata.uid);

    // The run itself is in the store, and the CLI still answers for it by its id or its key.
    expect((await operator.store.getRun(briefId))?.status).toBe('succeeded');
    const key = briefId.slice(briefId.lastIndexOf(':') + 1);
    expect(await ok('runs', '-o', 'name')).not.toContain(key);
    const all = JSON.parse(await ok('runs', '--all', '--json')) as {
      id: string;
      name: string;
      status: string;
      workflow: string;
    }[];
    expect(all.find((row) => row.id === briefId)).toMatchObject({ name: key, status: 'succeeded', workflow: 'brief' });
    expect(all.find((row) => row.id === keptId)).toMatchObject({ name: 'kept-1', status: 'succeeded' });
    // Found by the store (spool runs --search, issue 33 item 8), each shown by its Run's name; a run whose Run is gone only with --all.
    expect(await ok('runs', '--search', 'KEPT', '-o', 'name')).toBe('kept-1\n');
    expect(await ok('runs', '--search', 'brief', '-o', 'name')).toBe('');
    expect(await ok('runs', '--search', 'brief', '--all', '--since', '1h', '-o', 'name')).toBe(`${key}\n`);
    const status = await ok('status', briefId);
    expect(status).toMatch(new RegExp(`^id\\s+${briefId}$`, 'm'));
    expect(status).toMatch(/^status\s+succeeded$/m);
    expect(status).toMatch(/^archived\s+its Run resource was deleted/m);
    expect(await ok('status', key)).toMatch(/^status\s+succeeded$/m);
    expect(await ok('logs', briefId)).toBe('hello\n');
    expect(await ok('journal', key)).toMatch(/step\s+hello\s+.*hello/);
    // A key that names nothing is still one clear line.
    const missing = await as('status', 'run-0000000000000000');
    expect(missing.code).toBe(1);
    expect(missing.output.trim().split('\n')).toHaveLength(1);
    expect(missing.output).toContain('not found');
  });

  it('given a Handler with successfulRunsHistoryLimit 1 and failedRunsHistoryLimit 0, when four events start runs, then only the newest succeeded Run is left and the store keeps all four', async () => {
    await workflow('judge', 'if grep -q bad "$SPOOL_INPUT_FILE"; then exit 3; fi\nspool step ok -- echo ok\n');
    await cluster.custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: 'team-r',
      plural: 'handlers',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Handler',
        metadata: { name: 'on-order' },
        spec: {
          event: 'order.placed',
          workflowRef: { name: 'judge' },
          successfulRunsHistoryLimit: 1,
          failedRunsHistoryLimit: 0,
        },
      },
    });
    await eventually('the Handler in the store', async () =>
      (await operator.store.listHandlers('team-r')).some((handler) => handler.name === 'on-order'),
    );
    const started: string[] = [];
    // One at a time, so the runs finish in this order and "newest" is the last one.
    for (const [id, payload] of [
      ['o-1', '{"order":1}'],
      ['o-2', '{"order":"bad"}'],
      ['o-3', '{"order":3}'],
      ['o-4', '{"order":4}'],
    ] as const) {
      const answer = JSON.parse(
        await ok('event', 'emit', 'order.placed', '--id', id, '--payload', payload, '--json'),
      ) as { runs: string[] };
      const runId = answer.runs[0] ?? '';
      started.push(runId);
      await succeeded(runId);
    }
    const outcomes = await Promise.all(started.map(async (runId) => (await operator.store.getRun(runId))?.status));
    expect(outcomes).toEqual(['succeeded', 'failed', 'succeeded', 'succeeded']);
    const newest = started[3] ?? '';
    await eventually(
      'only the newest Run left',
      async () => {
        const left = await runs('hyperspool.dev/handler=on-order');
        return left.length === 1 && left[0]?.status?.runId === newest;
      },
      30_000,
    );
    const all = JSON.parse(await ok('runs', '--all', '--json')) as { id: string; workflow: string }[];
    expect(started.every((runId) => all.some((row) => row.id === runId))).toBe(true);
  });

  it('given a finished Run kept after the archive deleted its run, and a waiting Run whose run left a replaced database, then neither starts again: the first stays Succeeded, the second fails RunLost', async () => {
    await workflow('once', 'spool step hello -- echo once\n');
    await workflow('parked', 'spool wait signal go\nspool step after -- echo after\n');
    await whenRunCreated(cluster, 'once-1', 'once');
    await whenRunCreated(cluster, 'parked-1', 'parked');
    const admitted = (name: string) => eventually(`${name} admitted`, async () => (await runs()).find((run) => run.metadata.name === name)?.status?.runId);
    const onceId = await admitted('once-1');
    const parkedId = await admitted('parked-1');
    await succeeded(onceId);
    await eventually('parked-1 waiting', async () => (await operator.store.getRun(parkedId))?.status === 'waiting', 60_000);
    await eventually('once-1 Succeeded', async () => (await runs()).find((run) => run.metadata.name === 'once-1')?.status?.phase === 'Succeeded');

    // The archive's retention, run early: every finished run so far leaves the store.
    await operator.store.deleteRunsFinishedBefore(new Date(Date.now() + 60_000), 500);
    expect(await operator.store.getRun(onceId)).toBeNull();
    // A finished Run is reconciled again when it changes (and when a leader starts).
    await cluster.custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: 'team-r', plural: 'runs', name: 'once-1', body: { metadata: { annotations: { touched: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await forget(cluster.postgres.url, parkedId);

    const parked = await eventually('parked-1 Failed', async () => {
      const run = (await runs()).find((r) => r.metadata.name === 'parked-1');
      return run?.status?.phase === 'Failed' && run;
    });
    expect((parked.status as { message?: string }).message).toContain('is no longer in the database');
    // Given time to start again had it been admitted anew: nothing in the store, the status unchanged.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await operator.store.getRun(onceId)).toBeNull();
    expect(await operator.store.getRun(parkedId)).toBeNull();
    expect((await runs()).find((run) => run.metadata.name === 'once-1')?.status?.phase).toBe('Succeeded');
  });
});

/** A database replaced under a run, as the operator sees it: the run and every row of it gone. */
async function forget(url: string, runId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const table of ['journal', 'signals', 'activities', 'run_logs', 'leases', 'artifacts']) await client.query(`delete from ${table} where run_id = $1`, [runId]);
    await client.query('delete from runs where id = $1', [runId]);
  } finally {
    await client.end();
  }
}
