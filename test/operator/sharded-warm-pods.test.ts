import { PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signalRun } from '../../src/engine/wake.js';
import type { Operator } from '../../src/operator/operator.js';
import { shardOfRun } from '../../src/store/run-shards.js';
import { agentOf, eventually, getRun, givenPodOf, givenWorkflow, jobsOf, startCluster, startKubelet, watchJobsCreated, whenRunCreated, type Cluster } from './support/cluster.js';

const SHARDS = 4;
const LEASE_SECONDS = 5;
const SCRIPT = 'spool step a -- echo one\nspool wait signal go\nspool step b -- echo two\n';

/**
 * Warm pass pods with several active replicas: the pools are kept by shard 0's leader, and warm
 * pods' agents ask it for their pass, but a pass of a run in another shard is dispatched by that
 * shard's leader. It takes a waiting pod of the pool all the same (the one-shot patch of the pod's
 * labels), and the agent, asking shard 0's leader, is answered with that pass at once.
 */
describe('warm pass pods for the runs of every shard', () => {
  let cluster: Cluster;
  let jobWatch: Awaited<ReturnType<typeof watchJobsCreated>>;
  const operators: Operator[] = [];

  beforeAll(async () => {
    cluster = await startCluster('team-sw');
    await givenWorkflow(cluster, 'hot', 'hot.sh', SCRIPT);
    jobWatch = await watchJobsCreated(cluster);
  }, 180_000);

  afterAll(async () => {
    await jobWatch?.stop();
    for (const operator of operators) await operator.close();
    await cluster?.stop();
  });

  const start = async (name: string): Promise<Operator> => {
    const operator = await cluster.startOperator(name, { leaseDurationSeconds: LEASE_SECONDS, shards: SHARDS, warmPods: { max: 4, idleSeconds: 600 } });
    operators.push(operator);
    return operator;
  };
  const runIdOf = async (name: string): Promise<string> => eventually(`${name}'s run id`, async () => (await getRun(cluster, name)).status?.runId);
  const idleJob = (workflow: string): Promise<V1Job> =>
    eventually('an idle warm Job', async () => (await cluster.batch.listNamespacedJob({ namespace: cluster.namespace, labelSelector: `hyperspool.dev/workflow=${workflow},hyperspool.dev/warm=idle` })).items[0]);

  it("given 4 shards over 2 replicas and a Workflow's warm pod whose agent asks shard 0's leader, when a run of the other replica's shard comes due, then that replica assigns it the warm pod, the agent is answered with that pass and no Job of the pass's own is made", async () => {
    const a = await start('op-a');
    const b = await start('op-b');
    await eventually('the shards shared, each replica leading some', () => Promise.resolve(a.shards().length > 0 && b.shards().length > 0 && [...a.shards(), ...b.shards()].length === SHARDS), 20_000);
    const [keeper, other] = a.isLeader() ? [a, b] : [b, a];

    // Runs of the Workflow (no warm pods yet) until one is in a shard of the replica that does not lead shard 0; each waits for its signal.
    const kubelet = startKubelet(cluster, other.url);
    let chosen = { name: '', id: '' };
    try {
      for (let i = 1; !chosen.id; i += 1) {
        if (i > 12) throw new Error(`12 Runs and none in ${JSON.stringify(other.shards())}`);
        await whenRunCreated(cluster, `hot-${i}`, 'hot');
        const id = await runIdOf(`hot-${i}`);
        if (other.shards().includes(shardOfRun(id, SHARDS))) chosen = { name: `hot-${i}`, id };
      }
      await eventually(`${chosen.name} waiting for its signal`, async () => (await getRun(cluster, chosen.name)).status?.phase === 'Waiting', 30_000);
    } finally {
      await kubelet.stop();
    }

    // Now the pool: shard 0's leader makes its warm Job, whose pod's agent asks for a pass through the other replica (any replica, as the Service sends it).
    await cluster.custom.patchNamespacedCustomObject(
      { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'workflows', name: 'hot', body: { spec: { warmPods: 1 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const warm = await idleJob('hot');
    const pod = await givenPodOf(cluster, warm);
    const asked = fetch(`${other.url}/v1/agent/assignment`, { headers: { authorization: `Bearer ${pod.token}` } });
    await eventually('the warm agent asking shard 0’s leader', async () => /^hyperspool_warm_pods_waiting 1$/m.test(await (await fetch(`${keeper.healthUrl}/metrics`)).text()));

    await signalRun(keeper.store, chosen.id, 'go', '{}', new Date());
    // The first answer to the ask is the pass (not a null when the long poll ends): shard 0's leader saw the pod assigned.
    const answer = (await (await asked).json()) as { assignment?: { run: string; pass: number } | null };
    expect(answer).toEqual({ assignment: { run: chosen.id, pass: 2 } });
    const key = (await getRun(cluster, chosen.name)).metadata.labels?.['hyperspool.dev/run'] ?? '';
    expect((await jobsOf(cluster, key)).map((job) => job.metadata?.name)).toEqual([warm.metadata?.name]);
    expect(jobWatch.names).not.toContain(`${chosen.name}-p2`);

    // The pod serves that pass, through either replica, to the end.
    const pass2 = agentOf(keeper.url, chosen.id, 2, pod.token);
    expect((await pass2.spec()).body).toMatchObject({ filename: 'hot.sh', script: SCRIPT });
    expect((await pass2.call({ verb: 'step', name: 'a' })).body).toMatchObject({ status: 'ok', replayed: true });
    expect((await pass2.call({ verb: 'wait.signal', name: 'go' })).body).toMatchObject({ status: 'ok' });
    const step = await pass2.call({ verb: 'step', name: 'b' });
    expect(step.body).toMatchObject({ status: 'execute' });
    await pass2.call({ verb: 'done', position: step.body.position, stdout: 'two\n', exitCode: 0 });
    await pass2.exit(0);
    await eventually(`${chosen.name} Succeeded`, async () => (await getRun(cluster, chosen.name)).status?.phase === 'Succeeded', 30_000);
    expect((await getRun(cluster, chosen.name)).status?.passes).toBe(2);
  }, 150_000);
});
