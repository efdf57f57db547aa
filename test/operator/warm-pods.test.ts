import { execFileSync } from 'node:child_process';
import { BatchV1Api, PatchStrategy, setHeaderOptions, type V1Job, type V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/common/json-log.js';
import { signalRun } from '../../src/engine/wake.js';
import type { Workflow } from '../../src/operator/api/generated.js';
import { definitionKey, LABELS, MANAGED_BY, WARM } from '../../src/operator/naming.js';
import type { Operator } from '../../src/operator/operator.js';
import { WarmPools } from '../../src/operator/warm/warm-pools.js';
import { workflowPodSettings } from '../../src/operator/workflow-source.js';
import { agentOf, eventually, getRun, givenPodOf, jobsOf, startCluster, startPod, whenJobEnds, whenJobFinishes, whenRunCreated, type Cluster } from './support/cluster.js';

const SCRIPT = 'spool step a -- echo one\nspool wait signal go\nspool step b -- echo two\n';
/** Seconds an idle warm pod may wait here (--warm-pod-ttl): short, so that its expiry is seen. */
const IDLE_SECONDS = 3;

describe('warm pass pods on a real kube-apiserver', () => {
  let cluster: Cluster;
  let operator: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-w');
    operator = await cluster.startLeader('op-1', { warmPods: { max: 4, idleSeconds: 600 } });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const givenWorkflowSpec = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
    cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: cluster.namespace,
      plural: 'workflows',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name }, spec },
    });
  const workflowPatch = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
    cluster.custom.patchNamespacedCustomObject(
      { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'workflows', name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const idleJobs = async (workflow: string): Promise<V1Job[]> =>
    (await cluster.batch.listNamespacedJob({ namespace: cluster.namespace, labelSelector: `hyperspool.dev/workflow=${workflow},hyperspool.dev/warm=idle` })).items.filter(
      (job) => !job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True'),
    );
  /** A warm pod's agent asking for its pass (a long poll). */
  const ask = async (token: string): Promise<{ status: number; body: { assignment?: { run: string; pass: number } | null } }> => {
    const response = await fetch(`${operator.url}/v1/agent/assignment`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as { assignment?: { run: string; pass: number } | null } };
  };
  /** Once this many warm pods' agents are asking the leader for a pass. */
  const whenWaiting = (count: number): Promise<boolean> =>
    eventually(`${count} warm agents asking`, async () => new RegExp(`^hyperspool_warm_pods_waiting ${count}$`, 'm').test(await (await fetch(`${operator.healthUrl}/metrics`)).text()));
  /** TokenReviews the API server has answered so far (its own /metrics). */
  const tokenReviews = (): number =>
    execFileSync(cluster.plane.kubectl, ['--kubeconfig', cluster.plane.kubeconfigPath, 'get', '--raw', '/metrics'], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 })
      .split('\n')
      .filter((line) => line.startsWith('apiserver_request_total{') && line.includes('resource="tokenreviews"'))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  const runIdOf = async (name: string): Promise<string> => eventually(`${name}'s run id`, async () => (await getRun(cluster, name)).status?.runId);
  /** The pod spec without what tells a warm pod's agent from a pass's: its flag and its run's env. */
  const sameSpec = (spec: V1PodSpec | undefined): V1PodSpec => {
    const copy = structuredClone(spec) as V1PodSpec;
    const agent = copy.initContainers?.[0];
    if (agent) {
      agent.command = agent.command?.filter((word) => word !== '--warm');
      agent.env = agent.env?.filter((variable) => variable.name !== 'SPOOL_RUN_ID' && variable.name !== 'SPOOL_PASS');
    }
    return copy;
  };

  it("given a Workflow with warmPods, then idle Jobs made as its passes' are; a pass due takes a waiting pod and makes no Job, the pool refills, and that pod serves that pass only; an edit drains the pool and the older run finishes on its own definition", async () => {
    await givenWorkflowSpec('hot', { filename: 'hot.sh', script: SCRIPT, env: [{ name: 'COLOUR', value: 'blue' }], warmPods: 1 });
    const [warm] = await eventually('an idle warm Job', async () => {
      const jobs = await idleJobs('hot');
      return jobs.length > 0 && jobs;
    });
    const template = warm!.spec?.template;
    expect(template?.metadata?.labels).toMatchObject({ 'hyperspool.dev/warm': 'idle', 'hyperspool.dev/workflow': 'hot' });
    expect(template?.metadata?.labels?.['hyperspool.dev/definition']).toMatch(/^[0-9a-f]{16}$/);
    expect(template?.metadata?.labels?.['hyperspool.dev/run']).toBeUndefined();
    expect(warm!.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Workflow', name: 'hot', controller: true })]);
    expect(template?.spec?.initContainers?.[0]?.command?.at(-1)).toBe('--warm');
    expect(template?.spec?.containers[0]?.env).toContainEqual({ name: 'COLOUR', value: 'blue' });

    // Idle, its token is no pass's; its agent asks for one and waits.
    const pod = await givenPodOf(cluster, warm!);
    expect((await agentOf(operator.url, 'k8s:team-w:run-0000000000000000', 1, pod.token).spec()).status).toBe(401);
    const asked = ask(pod.token);
    await whenWaiting(1);
    await whenRunCreated(cluster, 'hot-1', 'hot');
    const runId = await runIdOf('hot-1');
    const answer = await asked;
    // With its script: the agent needs nothing more to start it.
    const spec = { run: runId, pass: 1, filename: 'hot.sh', interpreter: expect.any(String) as unknown, script: SCRIPT, input: expect.objectContaining({ run: runId }) as unknown };
    expect(answer).toEqual({ status: 200, body: { assignment: { run: runId, pass: 1, spec } } });
    // The pod is now that pass's, by its labels, and its Job (relabelled after the answer) too; no Job of the pass's own was made.
    const key = (await getRun(cluster, 'hot-1')).metadata.labels?.['hyperspool.dev/run'] ?? '';
    const assigned = await cluster.core.readNamespacedPod({ namespace: cluster.namespace, name: pod.pod.metadata?.name ?? '' });
    expect(assigned.metadata?.labels).toMatchObject({ 'hyperspool.dev/warm': 'assigned', 'hyperspool.dev/run': key, 'hyperspool.dev/pass': '1' });
    await eventually("the warm Job relabelled as the pass's", async () => (await jobsOf(cluster, key)).length > 0);
    expect((await jobsOf(cluster, key)).map((job) => job.metadata?.name)).toEqual([warm!.metadata?.name]);
    // Asking again (an answer lost on the way) gets the same pass, never another.
    expect((await ask(pod.token)).body).toEqual({ assignment: { run: runId, pass: 1, spec } });

    // The pool refills; a pass due while no pod of its pool asks gets a Job of its own.
    const [refill] = await eventually('the pool refilled', async () => {
      const jobs = (await idleJobs('hot')).filter((job) => job.metadata?.name !== warm!.metadata?.name);
      return jobs.length > 0 && jobs;
    });
    await whenRunCreated(cluster, 'hot-2', 'hot');
    const other = await runIdOf('hot-2');
    const key2 = (await getRun(cluster, 'hot-2')).metadata.labels?.['hyperspool.dev/run'] ?? '';
    const cold = await eventually("hot-2's own Job", async () => (await jobsOf(cluster, key2))[0]);
    expect(cold.metadata?.name).toBe('hot-2-p1');
    // Made alike: a warm pod is the pod the pass would have had.
    expect(sameSpec(template?.spec)).toEqual(sameSpec(cold.spec?.template.spec));

    // The assigned pod serves its pass, and is refused another run's journal; what its token
    // proves was learnt as it asked for its pass, so its first calls wait for no TokenReview.
    const reviews = tokenReviews();
    const pass1 = agentOf(operator.url, runId, 1, pod.token);
    expect((await pass1.spec()).body).toMatchObject({ filename: 'hot.sh', script: SCRIPT });
    const stolen = await agentOf(operator.url, other, 1, pod.token).call({ verb: 'step', name: 'a' });
    expect(stolen.status).toBe(403);
    expect(JSON.stringify(stolen.body)).toContain(`not pass 1 of run ${other}`);
    const step = await pass1.call({ verb: 'step', name: 'a' });
    expect(step.body).toMatchObject({ status: 'execute' });
    expect(tokenReviews()).toBe(reviews);
    await pass1.call({ verb: 'done', position: step.body.position, stdout: 'one\n', exitCode: 0 });
    expect((await pass1.call({ verb: 'wait.signal', name: 'go' })).body).toMatchObject({ status: 'suspended' });
    // Its script stopped, the pod ends; a waiting run holds nothing: the warm pod's Job goes as a pass's does.
    await whenJobFinishes(cluster, warm!);
    await eventually('the assigned warm Job deleted', async () => (await jobsOf(cluster, key)).length === 0);

    // The refill's pod waits; the Workflow's env changes: its pool drains and refills with the new settings.
    const refillPod = await givenPodOf(cluster, refill!);
    const waiting = ask(refillPod.token);
    await whenWaiting(1);
    await workflowPatch('hot', { env: [{ name: 'COLOUR', value: 'red' }] });
    const [fresh] = await eventually('a warm Job of the new settings', async () => {
      const jobs = (await idleJobs('hot')).filter((job) => job.spec?.template.spec?.containers[0]?.env?.some((variable) => variable.value === 'red'));
      return jobs.length > 0 && jobs;
    });
    expect(fresh!.metadata?.labels?.['hyperspool.dev/definition']).not.toBe(warm!.metadata?.labels?.['hyperspool.dev/definition']);
    await eventually('the old pool drained', async () => (await idleJobs('hot')).every((job) => job.metadata?.name === fresh!.metadata?.name));
    // The drained pod is told nothing, and refused once it asks again: it gets no pass while it goes.
    expect((await waiting).body).toEqual({ assignment: null });
    expect((await ask(refillPod.token)).status).toBe(401);

    // The older run keeps its settings: its next pass gets a Job of its own, as it started, and ends.
    await signalRun(operator.store, runId, 'go', '{}', new Date());
    const second = await eventually('hot-1 pass 2', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'));
    expect(second.metadata?.name).toBe('hot-1-p2');
    expect(second.spec?.template.spec?.containers[0]?.env).toContainEqual({ name: 'COLOUR', value: 'blue' });
    const pass2 = agentOf(operator.url, runId, 2, (await givenPodOf(cluster, second)).token);
    expect((await pass2.call({ verb: 'step', name: 'a' })).body).toMatchObject({ status: 'ok', replayed: true });
    expect((await pass2.call({ verb: 'wait.signal', name: 'go' })).body).toMatchObject({ status: 'ok' });
    const stepB = await pass2.call({ verb: 'step', name: 'b' });
    await pass2.call({ verb: 'done', position: stepB.body.position, stdout: 'two\n', exitCode: 0 });
    expect((await pass2.exit(0)).status).toBe(200);
    await eventually('hot-1 Succeeded', async () => (await getRun(cluster, 'hot-1')).status?.phase === 'Succeeded');
  });

  it("given a warm pod whose containers run (the agent with --warm, spool pass), then a Run's pass runs its script there to the end, and the pod ends with it", async () => {
    await givenWorkflowSpec('live', { filename: 'live.sh', script: 'spool step a -- echo from-a-warm-pod\n', warmPods: 1 });
    const [warm] = await eventually('an idle warm Job', async () => {
      const jobs = await idleJobs('live');
      return jobs.length > 0 && jobs;
    });
    const pod = await startPod(cluster, operator.url, warm!);
    // Its agent asks for a pass before any is due: only a pod that asks is given one.
    await whenWaiting(1);
    await whenRunCreated(cluster, 'live-1', 'live');
    const { code, output } = await pod.done;
    expect(code).toBe(0);
    expect(output).toContain('from-a-warm-pod');
    await eventually('live-1 Succeeded', async () => (await getRun(cluster, 'live-1')).status?.phase === 'Succeeded');
    const key = (await getRun(cluster, 'live-1')).metadata.labels?.['hyperspool.dev/run'] ?? '';
    expect((await jobsOf(cluster, key)).map((job) => job.metadata?.name)).toEqual([warm!.metadata?.name]);
  });

  it('given an idle warm pod that dies, then another takes its place; one idle past --warm-pod-ttl is replaced; warmPods 0 empties the pool', async () => {
    await operator.close();
    operator = await cluster.startLeader('op-2', { warmPods: { max: 4, idleSeconds: IDLE_SECONDS } });
    await givenWorkflowSpec('spare', { filename: 'spare.sh', script: 'true\n', warmPods: 1 });
    const [first] = await eventually('an idle warm Job', async () => {
      const jobs = await idleJobs('spare');
      return jobs.length > 0 && jobs;
    });
    // Its pod killed: the Job controller marks the Job Failed, and the pool makes another.
    await whenJobEnds(cluster, first!, 'Failed');
    const [second] = await eventually('a replacement', async () => {
      const jobs = (await idleJobs('spare')).filter((job) => job.metadata?.name !== first!.metadata?.name);
      return jobs.length > 0 && jobs;
    });
    // Idle too long: deleted, and a fresh one made after the TTL. (Not "any other name": a CI run
    // under heavy load once found a Job made in the same second as `second`, which the pool drops
    // as one too many; how that second one came to be made is not understood yet.)
    const createdAt = (job: V1Job): number => new Date(job.metadata?.creationTimestamp ?? 0).getTime();
    await eventually(
      'the idle Job replaced after its TTL',
      async () => {
        const jobs = await idleJobs('spare');
        return jobs.length === 1 && createdAt(jobs[0]!) - createdAt(second!) >= (IDLE_SECONDS - 1) * 1000;
      },
      (IDLE_SECONDS + 10) * 1000,
    );
    expect((await idleJobs('spare')).map((job) => job.metadata?.name)).not.toContain(second!.metadata?.name);
    await workflowPatch('spare', { warmPods: 0 });
    await eventually('the pool emptied', async () => (await idleJobs('spare')).length === 0);
  });


  /** A Workflow of one warm pod, named so, in the test's namespace. */
  const oneWarmPod = (name: string, uid: string): Workflow => ({
    apiVersion: 'hyperspool.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: cluster.namespace, uid },
    spec: { filename: `${name}.sh`, script: 'true\n', warmPods: 1 },
  });

  /** A pool of its own (not the operator's), acting as the operator does, on caches the test holds. */
  const poolOf = (workflow: Workflow, batch: BatchV1Api, jobs: () => V1Job[], taken: Set<string>): WarmPools =>
    new WarmPools({
      batch,
      settings: { runnerImage: 'hyperspool/runner:dev', serverUrl: 'http://hyperspool-operator.hyperspool-system.svc:7456', ttlSecondsAfterFinished: 600 },
      log: jsonLogger(() => undefined),
      max: 4,
      idleSeconds: null,
      workflows: () => [workflow],
      jobs,
      pods: () => [],
      running: () => 0,
      retire: () => undefined,
      isTaken: (_namespace, job) => taken.has(job),
      maxRunningPasses: 16,
      now: () => new Date(),
    });

  it("given a pod just assigned its pass, whose labels the caches do not show yet, then its pool makes the replacement at once, not at the next look", async () => {
    // A pool of its own (not the operator's), acting as the operator does, with the caches held
    // still: the taken pod's Job still reads idle there, as it does for a moment after a take.
    const workflow = oneWarmPod('still', '00000000-0000-4000-8000-000000000001');
    const labels = { [LABELS.managedBy]: MANAGED_BY, [LABELS.workflow]: 'still', [LABELS.warm]: WARM.idle, [LABELS.definition]: definitionKey(workflowPodSettings(workflow)) };
    const cached: V1Job = { metadata: { name: 'still-warm-taken', namespace: cluster.namespace, labels, creationTimestamp: new Date() } };
    const batch = cluster.operatorKubeConfig().makeApiClient(BatchV1Api);
    const created: string[] = [];
    const recording = Object.assign(Object.create(batch) as BatchV1Api, {
      createNamespacedJob: async (request: Parameters<BatchV1Api['createNamespacedJob']>[0]) => {
        const job = await batch.createNamespacedJob(request);
        created.push(job.metadata?.name ?? '');
        return job;
      },
    });
    const taken = new Set<string>();
    const pools = poolOf(workflow, recording, () => [cached], taken);
    pools.refill();
    await pools.settled();
    expect(created).toEqual([]);
    taken.add('still-warm-taken');
    pools.refill();
    await pools.settled();
    expect(created).toHaveLength(1);
    for (const name of created) await cluster.batch.deleteNamespacedJob({ namespace: cluster.namespace, name, propagationPolicy: 'Background' });
  });

  it('given a made Job whose watch event came before its create answered, then it is counted once: when a pass takes its pod the pool makes the replacement at once', async () => {
    const workflow = oneWarmPod('early', '00000000-0000-4000-8000-000000000002');
    const batch = cluster.operatorKubeConfig().makeApiClient(BatchV1Api);
    const cache: V1Job[] = [];
    const taken = new Set<string>();
    let pools: WarmPools | null = null;
    // The informer's ADDED (the cache updated, jobSeen told) lands before the create's answer does.
    const racing = Object.assign(Object.create(batch) as BatchV1Api, {
      createNamespacedJob: async (request: Parameters<BatchV1Api['createNamespacedJob']>[0]) => {
        const job = await batch.createNamespacedJob(request);
        cache.push(job);
        pools?.jobSeen(job);
        return job;
      },
    });
    pools = poolOf(workflow, racing, () => cache, taken);
    pools.refill();
    await pools.settled();
    expect(cache).toHaveLength(1);
    taken.add(cache[0]?.metadata?.name ?? '');
    pools.refill();
    await pools.settled();
    expect(cache).toHaveLength(2);
    for (const job of cache) await cluster.batch.deleteNamespacedJob({ namespace: cluster.namespace, name: job.metadata?.name ?? '', propagationPolicy: 'Background' });
  });
});
