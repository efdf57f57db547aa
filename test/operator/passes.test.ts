import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTable } from '../support/kube-table.js';
import { processesMentioning, removeTempDirs, tempDir } from '../support/spool.js';
import type { Operator } from '../../src/operator/operator.js';
import {
  untilPhase,
  agentOf,
  eventually,
  getRun,
  givenPodOf,
  givenWorkflow,
  jobsOf,
  startCluster,
  startPod,
  whenJobEnds,
  whenJobFinishes,
  whenRunCreated,
  type Cluster,
  type RunResource,
} from './support/cluster.js';

const SCRIPT = 'spool step a -- echo one\nspool sleep 2s\nspool step b -- echo two\n';

describe('a Run on a real kube-apiserver', () => {
  let cluster: Cluster;
  let operator: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-a');
    operator = await cluster.startLeader('op-1');
    await givenWorkflow(cluster, 'nap', 'nap.sh', SCRIPT);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('given a new Run, then exactly one Job for pass 1 with the agent as a native sidecar; a timer wait ends the pass and pass 2 comes at the wake time; the run ends Succeeded with a condition and an Event', async () => {
    const created = await whenRunCreated(cluster, 'nap-1', 'nap');
    const labelled = await eventually('the run key label', async () => (await getRun(cluster, 'nap-1')).metadata.labels?.['hyperspool.dev/run']);
    const [job] = await eventually('the pass-1 Job', async () => {
      const jobs = await jobsOf(cluster, labelled);
      return jobs.length > 0 && jobs;
    });
    expect(await jobsOf(cluster, labelled)).toHaveLength(1);
    // Named after the Run, so `kubectl logs job/nap-1-p1` needs no label looked up first.
    expect(job?.metadata?.name).toBe(`nap-1-p1`);
    expect(job?.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Run', name: 'nap-1', uid: created.metadata.uid, controller: true })]);
    expect(job?.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'hyperspool', 'hyperspool.dev/run': labelled, 'hyperspool.dev/pass': '1' });
    expect(job?.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0);
    const pod = job?.spec?.template.spec;
    const agent = pod?.initContainers?.[0];
    expect(agent).toMatchObject({ name: 'agent', restartPolicy: 'Always' });
    // No probe holds the script container back (a probe's period was most of a second of every
    // pass's start): `spool pass` waits for the agent's control socket itself.
    expect(agent?.startupProbe).toBeUndefined();
    // The runner image's NODE_OPTIONS (the SDK's resolve hook, for scripts) is not the agent's: its
    // loader thread was most of a tenth of a second of every cold pass's start.
    const nodeOptions = agent?.env?.find((variable) => variable.name === 'NODE_OPTIONS');
    expect(nodeOptions).toBeDefined();
    // Set and empty: the API server leaves an empty value out, which a container gets as ''.
    expect(nodeOptions?.value ?? '').toBe('');
    // The script container runs the Workflow's image with the static client the agent's postStart
    // copies in from the runner image (any image will do); the agent runs the runner image.
    expect(pod?.containers[0]?.command?.slice(0, 2)).toEqual(['/spool/bin/spool', 'pass']);
    expect(agent?.lifecycle?.postStart?.exec?.command).toEqual(['cp', '/usr/local/lib/hyperspool/spool', '/spool/bin/spool']);
    expect(pod?.volumes?.find((volume) => volume.name === 'client')?.emptyDir).toBeDefined();
    expect(pod?.volumes?.find((volume) => volume.name === 'spool')?.emptyDir).toBeDefined();
    for (const container of [agent, pod?.containers[0]]) expect(container?.volumeMounts).toContainEqual(expect.objectContaining({ name: 'spool', mountPath: '/spool' }));
    expect(pod?.volumes?.find((volume) => volume.name === 'token')?.projected?.sources?.[0]?.serviceAccountToken?.audience).toBe('hyperspool');

    // The pod's agent and runner: step a runs, the sleep suspends the run.
    const runId = (await getRun(cluster, 'nap-1')).status?.runId ?? '';
    const first = await givenPodOf(cluster, job!);
    const pass1 = agentOf(operator.url, runId, 1, first.token);
    expect((await pass1.spec()).body).toMatchObject({ filename: 'nap.sh', script: SCRIPT, interpreter: 'bash -eu' });
    // While pass 1 runs, the oldest-running-pass gauge counts its age (0 only when no pass runs).
    const during = await (await fetch(`${operator.healthUrl}/metrics`)).text();
    expect(Number(/^hyperspool_oldest_running_pass_seconds (\S+)$/m.exec(during)?.[1])).toBeGreaterThan(0);
    const step = await pass1.call({ verb: 'step', name: 'a' });
    expect(step.body).toMatchObject({ status: 'execute' });
    await pass1.call({ verb: 'done', position: step.body.position, stdout: 'one\n', exitCode: 0 });
    const sleep = await pass1.call({ verb: 'sleep', ms: 2000 });
    expect(sleep.body).toMatchObject({ status: 'suspended' });
    const suspendedAt = Date.now();

    await whenJobFinishes(cluster, job!);
    const waiting = await eventually('phase Waiting', async () => {
      const run = await getRun(cluster, 'nap-1');
      return run.status?.phase === 'Waiting' && run;
    });
    expect(waiting.status?.awaiting).toMatch(/^timer /);
    // A waiting run holds nothing: not even the finished pod of its last pass.
    await eventually('the pass-1 Job deleted', async () => (await jobsOf(cluster, labelled)).every((j) => j.metadata?.name !== `nap-1-p1`));
    const second = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, labelled)).find((j) => j.metadata?.name === `nap-1-p2`), 15_000);
    // Not before the timer: the sleep was 2 s from the call.
    expect(Date.now() - suspendedAt).toBeGreaterThanOrEqual(1900);
    expect(second.metadata?.labels?.['hyperspool.dev/pass']).toBe('2');

    const pod2 = await givenPodOf(cluster, second);
    const pass2 = agentOf(operator.url, runId, 2, pod2.token);
    expect((await pass2.call({ verb: 'step', name: 'a' })).body).toMatchObject({ status: 'ok', stdout: 'one\n', replayed: true });
    expect((await pass2.call({ verb: 'sleep', ms: 2000 })).body).toMatchObject({ status: 'ok' });
    const stepB = await pass2.call({ verb: 'step', name: 'b' });
    expect(stepB.body).toMatchObject({ status: 'execute' });
    await pass2.call({ verb: 'done', position: stepB.body.position, stdout: 'two\n', exitCode: 0 });
    expect((await pass2.exit(0)).status).toBe(200);

    const done = await eventually('phase Succeeded', async () => {
      const run = await getRun(cluster, 'nap-1');
      return run.status?.phase === 'Succeeded' && run;
    });
    expect(done.status?.passes).toBe(2);
    expect(done.status?.conditions).toEqual([expect.objectContaining({ type: 'Succeeded', status: 'True', reason: 'Succeeded' })]);
    const events = await eventually('a Succeeded Event', async () => {
      const list = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=nap-1' });
      return list.items.some((event) => event.reason === 'Succeeded') && list.items;
    });
    // The moments that matter, each once, in words without the run id; no Event for Pending.
    expect(events.map((event) => event.reason)).toContain('Succeeded');
    expect(events.map((event) => event.reason)).not.toContain('Pending');
    expect(events.find((event) => event.reason === 'Waiting')?.message).toMatch(/^suspended, awaiting timer /);

    // Pass 1's agent asked for its script; pass 2's did not (it went straight to its calls).
    const metrics = await (await fetch(`${operator.healthUrl}/metrics`)).text();
    expect(metrics).toMatch(/^hyperspool_pass_start_latency_seconds_count 1$/m);
    expect(metrics).toMatch(/^hyperspool_passes_started_total\{namespace="team-a"\} 2$/m);
    expect(Number(/^hyperspool_journal_write_seconds_count (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(4);
    expect(metrics).toMatch(/^hyperspool_oldest_running_pass_seconds 0$/m);

    const table = cluster.kubectl('get', 'runs', '-n', cluster.namespace);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+WORKFLOW\s+PHASE\s+SUBSTATE\s+AWAITING\s+PASSES\s+DURATION\s+MESSAGE\s+AGE/);
    expect(table).toMatch(/nap-1\s+nap\s+Succeeded\s+2\s+\d+s\s+/);
    // The operator writes how long the run took once it ends (two passes around a 2 s sleep), and
    // the DURATION column shows it as people write durations.
    const seconds = (Date.parse(done.status?.finishedAt ?? '') - Date.parse(done.status?.startedAt ?? '')) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(2);
    const cells = (await getTable(cluster.kubeConfig, `/apis/hyperspool.dev/v1alpha1/namespaces/${cluster.namespace}/runs`)).rows.find((row) => row.name === 'nap-1')?.cells;
    expect(cells?.Duration).toBe(done.status?.duration);
    expect(Math.abs(Number(/^(\d+)s$/.exec(String(cells?.Duration))?.[1]) - seconds)).toBeLessThanOrEqual(1);
  });

  it("given two runs, then one run's agent token is refused on the other run, and a request without a valid token is refused", async () => {
    await whenRunCreated(cluster, 'nap-2', 'nap');
    await whenRunCreated(cluster, 'nap-3', 'nap');
    const keyOf = async (name: string): Promise<string> =>
      eventually(`${name}'s key`, async () => (await getRun(cluster, name)).metadata.labels?.['hyperspool.dev/run']);
    const [key2, key3] = [await keyOf('nap-2'), await keyOf('nap-3')];
    const job2 = await eventually('nap-2 pass 1', async () => (await jobsOf(cluster, key2))[0]);
    await eventually('nap-3 pass 1', async () => (await jobsOf(cluster, key3))[0]);
    const run2 = (await getRun(cluster, 'nap-2')).status?.runId ?? '';
    const run3 = (await getRun(cluster, 'nap-3')).status?.runId ?? '';
    const { token } = await givenPodOf(cluster, job2);

    expect((await agentOf(operator.url, run2, 1, token).spec()).status).toBe(200);
    // No ActivityClass here: an activity is refused at once, rather than waiting forever.
    const activity = await agentOf(operator.url, run2, 1, token).call({ verb: 'activity.submit', name: 'probe', argv: ['true'], requires: [], attempts: 1, backoffMs: 1000, retryOnExit: null });
    expect(activity.body).toMatchObject({ status: 'error', kind: 'usage' });
    expect((activity.body as { message?: string }).message).toContain('no ActivityClass on this cluster runs activities');
    const stolen = await agentOf(operator.url, run3, 1, token).call({ verb: 'step', name: 'a' });
    expect(stolen.status).toBe(403);
    expect(JSON.stringify(stolen.body)).toContain(`not pass 1 of run ${run3}`);
    expect((await agentOf(operator.url, run2, 1, null).spec()).status).toBe(401);
    expect((await agentOf(operator.url, run2, 1, 'not-a-token').spec()).status).toBe(401);
    // An API token of the cluster that is not bound to a pass's pod proves nothing either.
    const plain = await cluster.core.createNamespacedServiceAccountToken({
      namespace: cluster.namespace,
      name: 'default',
      body: { spec: { audiences: ['hyperspool'], expirationSeconds: 3600 } },
    });
    expect((await agentOf(operator.url, run2, 1, plain.status?.token ?? '').spec()).status).toBe(401);
    // Nor does a pod someone made with a pass pod's labels: only the pass's Job makes its pods.
    const impostor = await cluster.core.createNamespacedPod({
      namespace: cluster.namespace,
      body: { metadata: { name: 'impostor', labels: { 'hyperspool.dev/run': key2, 'hyperspool.dev/pass': '1' } }, spec: { serviceAccountName: 'default', containers: [{ name: 'c', image: 'x' }] } },
    });
    const stolenToken = await cluster.core.createNamespacedServiceAccountToken({
      namespace: cluster.namespace,
      name: 'default',
      body: { spec: { audiences: ['hyperspool'], expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'impostor', uid: impostor.metadata?.uid ?? '' } } },
    });
    expect((await agentOf(operator.url, run2, 1, stolenToken.status?.token ?? '').spec()).status).toBe(401);
  });

  it('given a Run with a pass under way, when the Run is deleted, then its run is cancelled, its Job ends, and no Run comes back', async () => {
    await whenRunCreated(cluster, 'nap-gone', 'nap');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'nap-gone')).metadata.labels?.['hyperspool.dev/run']);
    await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const runId = (await getRun(cluster, 'nap-gone')).status?.runId ?? '';
    await cluster.custom.deleteNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'runs', name: 'nap-gone' });

    const cancelled = await eventually('the run cancelled', async () => {
      const run = await operator.store.getRun(runId);
      return run?.status === 'cancelled' && run;
    });
    expect(cancelled.error).toBe('its Run nap-gone was deleted');
    await eventually('the Job gone', async () => (await jobsOf(cluster, key)).length === 0);
    // Several sweeps later, nothing has re-created a Run for it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const runs = (await cluster.custom.listNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'runs' })) as { items: RunResource[] };
    expect(runs.items.map((run) => run.metadata.labels?.['hyperspool.dev/run'])).not.toContain(key);
  });

  it("given a Run made again under a name whose earlier Run's pass Job is still there, then that Job is deleted and the new pass takes the name; someone's own Job of a pass's name is left alone and its Run fails naming it", async () => {
    // No garbage collector runs here, so an earlier Run's Job stays until the operator deletes it.
    const givenJob = (name: string, labels: Record<string, string>, ownerUid: string | null): Promise<V1Job> =>
      cluster.batch.createNamespacedJob({
        namespace: cluster.namespace,
        body: {
          metadata: { name, labels, ...(ownerUid ? { ownerReferences: [{ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', name: 'nap-again', uid: ownerUid, controller: true }] } : {}) },
          spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
        },
      });
    await givenJob('nap-again-p1', { 'app.kubernetes.io/managed-by': 'hyperspool', 'hyperspool.dev/run': 'run-0000000000000000', 'hyperspool.dev/pass': '1' }, '00000000-0000-0000-0000-000000000000');
    await givenJob('nap-mine-p1', { app: 'mine' }, null);

    await whenRunCreated(cluster, 'nap-again', 'nap');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'nap-again')).metadata.labels?.['hyperspool.dev/run']);
    const taken = await eventually('its pass-1 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.name === 'nap-again-p1'));
    expect(taken.metadata?.ownerReferences?.[0]?.uid).toBe((await getRun(cluster, 'nap-again')).metadata.uid);

    await whenRunCreated(cluster, 'nap-mine', 'nap');
    const failed = await untilPhase('run nap-mine', () => getRun(cluster, 'nap-mine'), 'Failed');
    expect(failed.status?.message).toContain(`Job ${cluster.namespace}/nap-mine-p1 is in the way: it is not one of this run's; delete or rename it`);
    expect((await cluster.batch.readNamespacedJob({ namespace: cluster.namespace, name: 'nap-mine-p1' })).metadata?.labels).toEqual({ app: 'mine' });
  });

  it("given a Run under way, when its Workflow's image, env and script change, then its later passes keep what it started with, and a new Run takes the change", async () => {
    await givenWorkflow(cluster, 'imaged', 'imaged.sh', 'spool sleep 1s\n', [{ name: 'COLOUR', value: 'blue' }], 'runner:1');
    await whenRunCreated(cluster, 'imaged-1', 'imaged');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'imaged-1')).metadata.labels?.['hyperspool.dev/run']);
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const runId = (await getRun(cluster, 'imaged-1')).status?.runId ?? '';
    const pod1 = await givenPodOf(cluster, job1);
    expect((await agentOf(operator.url, runId, 1, pod1.token).call({ verb: 'sleep', ms: 1000 })).body).toMatchObject({ status: 'suspended' });

    await cluster.custom.patchNamespacedCustomObject(
      { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'workflows', name: 'imaged', body: { spec: { image: 'runner:2', env: [{ name: 'COLOUR', value: 'red' }], script: 'exit 3\n' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await whenJobFinishes(cluster, job1);
    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'));
    const containerOf = (job: V1Job) => job.spec?.template.spec?.containers[0];
    expect(containerOf(job2)).toMatchObject({ image: 'runner:1', env: [{ name: 'COLOUR', value: 'blue' }] });
    // The Workflow's image is the script's; the agent beside it runs the operator's runner image.
    expect(job2.spec?.template.spec?.initContainers?.[0]?.image).toBe(job1.spec?.template.spec?.initContainers?.[0]?.image);
    expect(job2.spec?.template.spec?.initContainers?.[0]?.image).not.toBe('runner:1');
    expect((await agentOf(operator.url, runId, 2, (await givenPodOf(cluster, job2)).token).spec()).body).toMatchObject({ script: 'spool sleep 1s\n' });

    await whenRunCreated(cluster, 'imaged-2', 'imaged');
    const key2 = await eventually('the run key', async () => (await getRun(cluster, 'imaged-2')).metadata.labels?.['hyperspool.dev/run']);
    const fresh = await eventually('the new Run\'s Job', async () => (await jobsOf(cluster, key2))[0]);
    expect(containerOf(fresh)).toMatchObject({ image: 'runner:2', env: [{ name: 'COLOUR', value: 'red' }] });
  });

  it('given a Schedule with its own input and overlap Allow, then each tick starts a run with that input even while the last one goes on, and its status says when it last ticked', async () => {
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: cluster.namespace,
      plural: 'schedules',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'often' }, spec: { every: '1s', workflowRef: { name: 'nap' }, input: { region: 'eu' }, overlap: 'Allow' } },
    });
    const ticked = await eventually('two runs of the schedule', async () => {
      const runs = (await operator.store.listRuns({ project: cluster.namespace, limit: 200 })).filter((run) => isDeepStrictEqual(run.input, { region: 'eu' }));
      return runs.length >= 2 && runs;
    }, 15_000);
    // Nothing runs their pods here: the first is still going when the second starts.
    expect(ticked.filter((run) => run.status !== 'succeeded').length).toBeGreaterThanOrEqual(2);
    const schedule = await eventually('lastScheduleTime', async () => {
      const got = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'schedules', name: 'often' })) as {
        status?: { lastScheduleTime?: string; skipped?: number };
      };
      return got.status?.lastScheduleTime ? got : null;
    }, 15_000);
    expect(Date.parse(schedule.status?.lastScheduleTime ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(schedule.status?.skipped ?? 0).toBe(0);
    await cluster.custom.deleteNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'schedules', name: 'often' });
  });

  it("given a pass's pod that cannot pull its image, then the Run says why within seconds (condition, message, Event); an invalid image name fails the run at once", async () => {
    type RunStatus = { status?: { phase?: string; message?: string; conditions?: { type: string; status: string; reason: string; message: string }[] } };
    const statusOf = async (name: string) => (await getRun(cluster, name)) as RunStatus;
    /** Plays the kubelet: the pod's script container waits, for this reason. */
    const kubeletSays = async (pod: string, reason: string, message: string) => {
      await cluster.core.patchNamespacedPodStatus(
        {
          namespace: cluster.namespace,
          name: pod,
          body: { status: { phase: 'Pending', containerStatuses: [{ name: 'script', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } } }] } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    };
    /** A Run whose pass's pod is stuck for this reason; the pod's name. */
    const stuckPod = async (run: string, reason: string, message: string): Promise<string> => {
      await whenRunCreated(cluster, run, 'stuck');
      const key = await eventually('the run key', async () => (await getRun(cluster, run)).metadata.labels?.['hyperspool.dev/run']);
      const job = await eventually('its Job', async () => (await jobsOf(cluster, key))[0]);
      const name = (await givenPodOf(cluster, job)).pod.metadata?.name ?? '';
      await kubeletSays(name, reason, message);
      return name;
    };
    await givenWorkflow(cluster, 'stuck', 'stuck.sh', 'true\n', [], 'registry.example/missing:1');
    // The kubelet says ErrImagePull, then ImagePullBackOff, each time with other text (a resolver's port).
    const pullError = (port: number) => `failed to pull and unpack image "registry.example/missing:1": dial udp 10.0.0.10:${port}: no such host`;
    const pod = await stuckPod('stuck-1', 'ErrImagePull', pullError(53101));
    const told = await eventually('the PodReady condition', async () => (await statusOf('stuck-1')).status?.conditions?.find((c) => c.type === 'PodReady'), 10_000);
    expect(told).toMatchObject({ status: 'False', reason: 'ImagePullBackOff', message: `the script container cannot start: ErrImagePull: ${pullError(53101)}` });
    // The Run's message is one short line; the kubelet's detail is in the condition.
    const summary = 'pass 1: the script container cannot start: ImagePullBackOff (image "registry.example/missing:1")';
    expect((await statusOf('stuck-1')).status).toMatchObject({ phase: 'Running', message: summary });
    await kubeletSays(pod, 'ImagePullBackOff', 'Back-off pulling image "registry.example/missing:1"');
    await kubeletSays(pod, 'ErrImagePull', pullError(40417));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await statusOf('stuck-1')).status?.message).toBe(summary);
    // One Warning, whose text does not change as the kubelet's does, so repeats aggregate.
    const events = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=stuck-1' });
    const warnings = events.items.filter((event) => event.type === 'Warning');
    expect(warnings.map((event) => [event.reason, event.message])).toEqual([['ImagePullBackOff', summary]]);

    await stuckPod('stuck-2', 'InvalidImageName', 'Failed to apply default image tag "Bad:Image": invalid reference format');
    const failed = await eventually('stuck-2 Failed', async () => (await statusOf('stuck-2')).status?.phase === 'Failed' && (await statusOf('stuck-2')).status, 10_000);
    expect(failed.message).toBe("pass 1's pod cannot start: the script container cannot start: InvalidImageName (image \"registry.example/missing:1\")");
  });

  it('given a Schedule every hour with runOnCreate, then it starts a run at once, and its next tick is an hour on', async () => {
    const schedules = { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'schedules' };
    const created = Date.now();
    await cluster.custom.createNamespacedCustomObject({
      ...schedules,
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'hourly' }, spec: { every: '1h', workflowRef: { name: 'nap' }, runOnCreate: true } },
    });
    const ran = await eventually('a run of hourly', async () => (await operator.store.listRuns({ project: cluster.namespace, limit: 500 })).find((run) => (run.input as { schedule?: string } | null)?.schedule === 'hourly'), 15_000);
    expect(ran.createdAt.getTime() - created).toBeLessThan(15_000);
    const record = (await operator.store.listSchedules(cluster.namespace)).find((schedule) => schedule.name === 'hourly');
    expect(record?.nextAt.getTime()).toBeGreaterThan(created + 3_500_000);
    // LAST RUN names the Run `kubectl get run` finds (not the run's key).
    type ScheduleStatus = { status?: { lastRunName?: string; nextScheduleTime?: string; conditions?: { type: string; status: string; reason: string }[] } };
    const statusOf = async () => ((await cluster.custom.getNamespacedCustomObject({ ...schedules, name: 'hourly' })) as ScheduleStatus).status;
    const lastRunName = await eventually('LAST RUN', async () => (await statusOf())?.lastRunName, 15_000);
    expect((await getRun(cluster, lastRunName)).status?.runId).toBe(ran.id);
    // Suspended, it has no next tick: NEXT goes blank, READY says False.
    await cluster.custom.patchNamespacedCustomObject({ ...schedules, name: 'hourly', body: { spec: { suspend: true } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const suspended = await eventually('NEXT cleared', async () => {
      const status = await statusOf();
      return status?.nextScheduleTime === undefined && status;
    }, 15_000);
    expect(suspended.conditions?.find((condition) => condition.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Suspended' });
    expect(suspended.lastRunName).toBe(lastRunName);
    await cluster.custom.deleteNamespacedCustomObject({ ...schedules, name: 'hourly' });
  });

  it("given a Schedule every hour, when its Workflow's script is edited, then its next tick stays where it was; when its every changes, the tick moves", async () => {
    const schedules = { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'schedules' };
    const workflows = { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'workflows' };
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    await givenWorkflow(cluster, 'rolled', 'rolled.sh', 'echo v1\n');
    await cluster.custom.createNamespacedCustomObject({
      ...schedules,
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'daily-roll' }, spec: { every: '1h', workflowRef: { name: 'rolled' } } },
    });
    const record = () => operator.store.listSchedules(cluster.namespace).then((all) => all.find((schedule) => schedule.name === 'daily-roll'));
    const first = await eventually('the schedule in the store', record);
    // GitOps rolls the script out: the Schedule's runs get it, and its tick is not pushed back.
    await cluster.custom.patchNamespacedCustomObject({ ...workflows, name: 'rolled', body: { spec: { script: 'echo v2\n' } } }, merge);
    const rolled = await eventually('the new script in the schedule', async () => ((await record())?.script === 'echo v2\n' ? record() : undefined));
    expect(rolled?.nextAt).toEqual(first.nextAt);
    // A new cadence is a new next tick.
    await cluster.custom.patchNamespacedCustomObject({ ...schedules, name: 'daily-roll', body: { spec: { every: '2h' } } }, merge);
    const moved = await eventually('the new cadence in the schedule', async () => ((await record())?.everyMs === 7_200_000 ? record() : undefined));
    expect(moved?.nextAt.getTime()).toBeGreaterThan(first.nextAt.getTime());
    await cluster.custom.deleteNamespacedCustomObject({ ...schedules, name: 'daily-roll' });
  });

  it("given a Schedule whose cron does not parse, then it is not Ready, saying the parser's reason, and it starts nothing", async () => {
    const schedules = { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'schedules' };
    await cluster.custom.createNamespacedCustomObject({
      ...schedules,
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'bad-cron' }, spec: { cron: '61 * * * *', workflowRef: { name: 'nap' } } },
    });
    type WithReady = { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } };
    const ready = await eventually('the Ready condition', async () =>
      ((await cluster.custom.getNamespacedCustomObject({ ...schedules, name: 'bad-cron' })) as WithReady).status?.conditions?.find((condition) => condition.type === 'Ready'),
    );
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidCron' });
    expect(ready.message).toMatch(/^bad cron expression '61 \* \* \* \*': /);
    expect((await operator.store.listSchedules(cluster.namespace)).map((schedule) => schedule.name)).not.toContain('bad-cron');
    // And a Warning Event says so, once.
    const warnings = async () =>
      (await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=bad-cron' })).items.filter((event) => event.type === 'Warning');
    const [warning] = await eventually('the InvalidCron Event', async () => (await warnings()).length > 0 && warnings(), 10_000);
    expect(warning).toMatchObject({ reason: 'InvalidCron', message: ready.message, involvedObject: { kind: 'Schedule', name: 'bad-cron' } });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await warnings()).toHaveLength(1);
    await cluster.custom.deleteNamespacedCustomObject({ ...schedules, name: 'bad-cron' });
  });

  it('given a Workflow whose pipeline document has a mistake, then it is not Ready, with the line and column, and a Run of it fails at once with the same message', async () => {
    await givenWorkflow(cluster, 'broken', 'broken.yaml', 'name: broken\njobs:\n  only:\n    stepz: []\n');
    type WithReady = { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } };
    const readyOf = async (name: string) =>
      ((await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'workflows', name })) as WithReady).status?.conditions?.find(
        (condition) => condition.type === 'Ready',
      );
    const broken = await eventually('the broken Workflow judged', () => readyOf('broken'));
    expect(broken).toMatchObject({ status: 'False', reason: 'InvalidPipeline' });
    expect(broken.message).toMatch(/^broken\.yaml:4:5: /);
    expect(await eventually('nap judged', () => readyOf('nap'))).toMatchObject({ status: 'True', reason: 'Valid' });

    await whenRunCreated(cluster, 'broken-1', 'broken');
    const failed = await eventually('phase Failed', async () => {
      const run = await getRun(cluster, 'broken-1');
      return run.status?.phase === 'Failed' && run;
    });
    expect(failed.status?.conditions).toEqual([expect.objectContaining({ type: 'Succeeded', status: 'False', reason: 'Invalid', message: broken.message })]);
    // The Event is written after the status: it may come a moment later.
    const events = await eventually('the Run’s Event', async () => {
      const list = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=broken-1' });
      return list.items.length > 0 && list;
    });
    expect(events.items.map((event) => event.reason)).toEqual(['Invalid']);
  });

  it('given a graph whose typed inputs a Run’s input does not fit, then the Run fails at once naming the input, and one that fits is admitted', async () => {
    const graph = 'input:\n  amount: { type: number, max: 500 }\nnodes:\n  - { id: pause, type: sleep, config: { duration: 1h } }\n';
    await givenWorkflow(cluster, 'typed', 'typed.yaml', graph);
    const withInput = (name: string, input: unknown) =>
      cluster.custom.createNamespacedCustomObject({
        group: 'hyperspool.dev',
        version: 'v1alpha1',
        namespace: cluster.namespace,
        plural: 'runs',
        body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { workflowRef: { name: 'typed' }, input } },
      });
    await withInput('typed-over', { amount: 900 });
    await withInput('typed-fits', { amount: 20 });
    const failed = await eventually('typed-over Failed', async () => {
      const run = await getRun(cluster, 'typed-over');
      return run.status?.phase === 'Failed' && run;
    });
    expect(failed.status?.conditions).toEqual([expect.objectContaining({ reason: 'Invalid', message: "input 'amount' must be at most 500, not 900" })]);
    expect(await eventually('typed-fits admitted', async () => (await getRun(cluster, 'typed-fits')).status?.runId)).toMatch(/^k8s:/);
  });
});

describe('a pass whose pod dies', () => {
  let cluster: Cluster;
  let operator: Operator;
  let sideEffects: string;

  beforeAll(async () => {
    cluster = await startCluster('team-l');
    operator = await cluster.startLeader('op-lost');
    sideEffects = join(tempDir('spool-lost-'), 'effects');
    await givenWorkflow(
      cluster,
      'slow',
      'slow.sh',
      'spool step a -- sh -c \'echo a >> "$EFFECTS"; echo one\'\nspool step slow -- sh -c \'echo slow >> "$EFFECTS"; sleep 30\'\necho finished\n',
      [{ name: 'EFFECTS', value: sideEffects }],
    );
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    removeTempDirs();
  });

  it('given a pod killed in the middle of a step, then the pass is dispatched again and replays: the finished step does not run twice, the interrupted one runs again', async () => {
    await whenRunCreated(cluster, 'slow-1', 'slow');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'slow-1')).metadata.labels?.['hyperspool.dev/run']);
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const pod1 = await startPod(cluster, operator.url, job1);
    await eventually('step slow to start', () => Promise.resolve(existsSync(sideEffects) && readFileSync(sideEffects, 'utf8').includes('slow')));
    await pod1.kill();

    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'));
    // Pass 2's sleep is cut short: the point is what ran, not how long.
    const pod2 = await startPod(cluster, operator.url, job2);
    await eventually('step slow to start again', () => Promise.resolve(readFileSync(sideEffects, 'utf8').split('\n').filter((line) => line === 'slow').length === 2));
    expect(readFileSync(sideEffects, 'utf8')).toBe('a\nslow\nslow\n');
    await pod2.kill();
    const job3 = await eventually('the pass-3 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '3'));
    expect(job3.metadata?.labels?.['hyperspool.dev/pass']).toBe('3');
    const run = await getRun(cluster, 'slow-1');
    expect(run.status?.passes).toBe(3);
    expect(run.status?.phase).not.toBe('Failed');
  });

  it('given a pod deleted in the middle of a step (SIGTERM to its script container), then the pass is lost, not failed, and the run replays in a new pass', async () => {
    const effects = join(tempDir('spool-evicted-'), 'effects');
    await givenWorkflow(cluster, 'evicted', 'evicted.sh', 'spool step slow -- sh -c \'echo slow >> "$EFFECTS"; sleep 30\'\n', [{ name: 'EFFECTS', value: effects }]);
    await whenRunCreated(cluster, 'evicted-1', 'evicted');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'evicted-1')).metadata.labels?.['hyperspool.dev/run']);
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const pod1 = await startPod(cluster, operator.url, job1);
    await eventually('step slow to start', () => Promise.resolve(existsSync(effects)));
    pod1.terminate();
    expect((await pod1.done).code).toBe(143);
    // Its script went with it (a kubelet would have killed it at the end of the grace period anyway).
    await eventually('the script gone', () => Promise.resolve(processesMentioning('evicted.sh').length === 0), 5_000);

    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'));
    expect(job2.metadata?.labels?.['hyperspool.dev/pass']).toBe('2');
    expect((await getRun(cluster, 'evicted-1')).status?.phase).not.toBe('Failed');
    // Why a run took a pass more says itself on the Run (kubectl describe run).
    const lost = await eventually('a PassLost Event', async () => {
      const list = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=evicted-1' });
      return list.items.find((event) => event.reason === 'PassLost');
    });
    expect(lost.type).toBe('Warning');
    expect(lost.message).toMatch(/^pass 1 lost: its Job ended Failed/);
    const pod2 = await startPod(cluster, operator.url, job2);
    await eventually('step slow to start again', () => Promise.resolve(readFileSync(effects, 'utf8') === 'slow\nslow\n'));
    await pod2.kill();
  });

  it("given a pass lost (its Job ended without word) and the replay suspending, then neither pass's Job is left: a waiting run holds nothing on the node", async () => {
    await givenWorkflow(cluster, 'relapse', 'relapse.sh', 'spool sleep 1m\n');
    await whenRunCreated(cluster, 'relapse-1', 'relapse');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'relapse-1')).metadata.labels?.['hyperspool.dev/run']);
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    await whenJobEnds(cluster, job1, 'Failed');

    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'));
    const runId = (await getRun(cluster, 'relapse-1')).status?.runId ?? '';
    const pass2 = agentOf(operator.url, runId, 2, (await givenPodOf(cluster, job2)).token);
    expect((await pass2.call({ verb: 'sleep', ms: 60_000 })).body).toMatchObject({ status: 'suspended' });
    await pass2.exit(0);

    await untilPhase('run relapse-1', () => getRun(cluster, 'relapse-1'), 'Waiting');
    await eventually('no Job of the run left', async () => (await jobsOf(cluster, key)).length === 0, 10_000);
  });

  it("given a pod whose script container starts before its agent (no startup probe orders them), then spool pass waits for the agent's socket and the run succeeds", async () => {
    await givenWorkflow(cluster, 'early', 'early.sh', 'spool step a -- echo one\n');
    await whenRunCreated(cluster, 'early-1', 'early');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'early-1')).metadata.labels?.['hyperspool.dev/run']);
    const job = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const pod = await startPod(cluster, operator.url, job, { agentDelayMs: 1500 });
    const { code, output } = await pod.done;
    expect(output).toContain('one');
    expect(code).toBe(0);
    await untilPhase('run early-1', () => getRun(cluster, 'early-1'), 'Succeeded');
  });
});

describe('a pass whose pod never starts', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster('team-s');
    await cluster.startLeader('op-stuck', { startTimeoutSeconds: 2 });
    await givenWorkflow(cluster, 'stuck', 'stuck.sh', 'true\n');
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('given a pod that does not start its script in time (an image that cannot be pulled, say), then its Job is ended and the pass dispatched again, and after five such passes the run fails saying why', async () => {
    await whenRunCreated(cluster, 'stuck-1', 'stuck');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'stuck-1')).metadata.labels?.['hyperspool.dev/run']);
    const first = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const second = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.name === `stuck-1-p2`), 10_000);
    expect(Date.parse(String(second.metadata?.creationTimestamp)) - Date.parse(String(first.metadata?.creationTimestamp))).toBeGreaterThanOrEqual(1000);
    expect((await jobsOf(cluster, key)).map((job) => job.metadata?.name)).not.toContain(`stuck-1-p1`);

    const failed = await eventually('phase Failed', async () => {
      const run = await getRun(cluster, 'stuck-1');
      return run.status?.phase === 'Failed' && run;
    }, 30_000);
    expect(failed.status?.passes).toBe(5);
    expect(failed.status?.message).toContain('did not start the script within 2s');
    expect(failed.status?.message).toContain('5 passes in a row were lost');
    expect(await jobsOf(cluster, key)).toEqual([]);
  });
});
