import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { removeTempDirs, spool, tempDir, type SpoolResult } from '../support/spool.js';
import {
  untilPhase,
  agentOf,
  eventually,
  exposeOperator,
  getRun,
  givenPodOf,
  givenUser,
  hostAddressForProxy,
  jobsOf,
  startCluster,
  whenJobFinishes,
  whenPodRuns,
  startKubelet,
  type Cluster,
} from './support/cluster.js';

const WAIT_SCRIPT = 'spool wait signal go --timeout 1h\nspool step done -- echo ok\n';
const NAP_SCRIPT = 'spool step a -- echo one\nspool sleep 1s\nspool step b -- echo two\necho done >&2\n';
describe('the spool CLI on a cluster (kubeconfig, --context, -n)', () => {
  let cluster: Cluster;
  let operator: Operator;
  let dir: string;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    cluster = await startCluster('team-c');
    operator = await cluster.startLeader('op-cli', { host: hostAddressForProxy() });
    await exposeOperator(cluster, operator);
    dir = tempDir('spool-cli-cluster-');
    // The user roles config/rbac ships: alice edits, bob views.
    cluster.kubectl('apply', '-f', 'config/rbac/user_roles.yaml');
    alice = await givenUser(cluster, 'alice', 'hyperspool-edit', dir);
    bob = await givenUser(cluster, 'bob', 'hyperspool-view', dir);
    writeFileSync(join(dir, 'wait-for-go.sh'), WAIT_SCRIPT);
    writeFileSync(join(dir, 'nap.sh'), NAP_SCRIPT);
    writeFileSync(join(dir, 'refund.yaml'), readFileSync(new URL('../pipeline/fixtures/refund.yaml', import.meta.url), 'utf8'));
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    removeTempDirs();
  });

  const listRuns = () => listRunsIn(cluster);
  const as = (kubeconfig: string, ...args: string[]): Promise<SpoolResult> =>
    spool([...args, '--kubeconfig', kubeconfig, '--context', kubeconfig.endsWith('alice.kubeconfig') ? 'alice' : 'bob', '-n', 'team-c'], {
      cwd: dir,
      env: { SPOOL_SERVER: undefined },
    });
  const ok = async (kubeconfig: string, ...args: string[]): Promise<string> => {
    const result = await as(kubeconfig, ...args);
    if (result.code !== 0) throw new Error(`spool ${args.join(' ')} exited ${String(result.code)}:\n${result.output}`);
    return result.output;
  };

  it('given a script, when submitted, then it becomes a Workflow and a Run; runs and status show it waiting; a signal wakes it and it succeeds', async () => {
    const runId = (await ok(alice, 'submit', 'wait-for-go.sh')).trim();
    expect(runId).toMatch(/^k8s:team-c:run-[a-z0-9]{16}$/);
    const workflow = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-c', plural: 'workflows', name: 'wait-for-go' })) as {
      spec: { filename: string; script: string };
    };
    expect(workflow.spec).toEqual({ filename: 'wait-for-go.sh', script: WAIT_SCRIPT });

    const rows = JSON.parse(await ok(alice, 'runs', '--json')) as { name: string; id: string }[];
    const name = rows.find((row) => row.id === runId)?.name ?? '';
    expect(name).toMatch(/^wait-for-go-/);
    const key = runId.slice(runId.lastIndexOf(':') + 1);

    // Pass 1 reaches the wait and suspends.
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const pod1 = await givenPodOf(cluster, job1);
    expect((await agentOf(operator.url, runId, 1, pod1.token).call({ verb: 'wait.signal', name: 'go', timeoutMs: 3_600_000 })).body).toMatchObject({ status: 'suspended' });
    await whenJobFinishes(cluster, job1);
    await untilPhase(`run ${name}`, () => getRun(cluster, name), 'Waiting');

    const table = await ok(alice, 'runs');
    expect(table.split('\n')[0]).toMatch(/^RUN\s+STATUS\s+AWAITING\s+PASSES\s+AGE\s+WORKFLOW$/);
    // The same through kubectl, as its plugin (kubectl-spool on PATH); not run synchronously, as
    // the operator that answers its aggregated API request runs in this process.
    const { stdout: plugin } = await promisify(execFile)(cluster.plane.kubectl, ['spool', 'runs', '--kubeconfig', alice, '--context', 'alice', '-n', 'team-c'], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(import.meta.dirname, '..', '..', 'bin')}:${process.env.PATH ?? ''}`, SPOOL_SERVER: '' },
    });
    expect(plugin).toMatch(new RegExp(`${name}\\s+waiting\\s+signal go`));
    expect(table).toMatch(new RegExp(`${name}\\s+waiting\\s+signal go\\s+1\\s+\\d+s\\s+wait-for-go`));
    const status = await ok(alice, 'status', name);
    expect(status).toMatch(new RegExp(`^id\\s+${runId}$`, 'm'));
    expect(status).toMatch(/^status\s+waiting$/m);

    // Bob may read runs but not change them: the operator asks RBAC (SubjectAccessReview).
    const refused = await as(bob, 'signal', name, 'go');
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(`system:serviceaccount:team-c:bob may not update runs.hyperspool.dev ${name} in namespace team-c`);
    expect(refused.output.trim().split('\n')).toHaveLength(1);

    expect(await ok(alice, 'signal', name, 'go', 'yes')).toBe(`signal go queued for ${name}\n`);
    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'), 15_000);
    const pod2 = await givenPodOf(cluster, job2);
    const pass2 = agentOf(operator.url, runId, 2, pod2.token);
    expect((await pass2.call({ verb: 'wait.signal', name: 'go', timeoutMs: 3_600_000 })).body).toMatchObject({ status: 'ok', stdout: 'yes\n' });
    const step = await pass2.call({ verb: 'step', name: 'done' });
    await pass2.call({ verb: 'done', position: step.body.position, stdout: 'ok\n', exitCode: 0 });
    await pass2.exit(0);
    await untilPhase(`run ${name}`, () => getRun(cluster, name), 'Succeeded');
    expect(await ok(alice, 'status', runId)).toMatch(/^status\s+succeeded$/m);
  });

  it('given a Run that ran steps one and two, when spool rerun reruns it from two, then a new Run names it in spec.rerunOf and a label and replays one; a step it never ran, or a viewer, makes no Run', async () => {
    writeFileSync(join(dir, 'two-steps.sh'), 'spool step one -- date +%N\nspool step two -- date +%N\n');
    const runId = (await ok(alice, 'submit', 'two-steps.sh')).trim();
    const key = runId.slice(runId.lastIndexOf(':') + 1);
    const name = (await listRuns()).find((run) => run.metadata.labels?.['hyperspool.dev/run'] === key)?.metadata.name ?? '';
    const job = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const pass = agentOf(operator.url, runId, 1, (await givenPodOf(cluster, job)).token);
    for (const step of ['one', 'two']) {
      const call = await pass.call({ verb: 'step', name: step });
      await pass.call({ verb: 'done', position: call.body.position, stdout: `${step}-first\n`, exitCode: 0 });
    }
    await pass.exit(0);
    await untilPhase(`run ${name}`, () => getRun(cluster, name), 'Succeeded');
    const runs = (await listRuns()).length;

    const unknown = await as(alice, 'rerun', name, '--from-step', 'nope');
    expect(unknown.output.trim()).toBe(`spool: ${runId} has no step 'nope': it reached one, two`);
    expect(unknown.code).toBe(2);
    const viewer = await as(bob, 'rerun', name, '--from-step', 'two');
    expect(viewer.code).not.toBe(0);
    expect(viewer.output).toContain('forbidden');
    expect((await listRuns()).length).toBe(runs);

    const newId = (await ok(alice, 'rerun', name, '--from-step', 'two')).trim();
    expect(newId).toMatch(/^k8s:team-c:run-[a-z0-9]{16}$/);
    const rerun = (await listRuns()).find((run) => run.metadata.labels?.['hyperspool.dev/run'] === newId.slice(newId.lastIndexOf(':') + 1));
    expect(rerun?.metadata.labels?.['hyperspool.dev/rerun-of']).toBe(name);
    const rerunName = rerun?.metadata.name ?? '';
    expect(((await getRun(cluster, rerunName)) as unknown as { spec: object }).spec).toMatchObject({ workflowRef: { name: 'two-steps' }, rerunOf: { name, fromStep: 'two' } });
    const newJob = await eventually('the rerun pass-1 Job', async () => (await jobsOf(cluster, newId.slice(newId.lastIndexOf(':') + 1)))[0]);
    const again = agentOf(operator.url, newId, 1, (await givenPodOf(cluster, newJob)).token);
    expect((await again.call({ verb: 'step', name: 'one' })).body).toMatchObject({ status: 'ok', replayed: true, stdout: 'one-first\n' });
    expect((await again.call({ verb: 'step', name: 'two' })).body).toMatchObject({ status: 'execute' });
    // spool status links both ways, by Run name.
    expect(await ok(alice, 'status', rerunName)).toMatch(new RegExp(`^rerunOf\\s+\\{"name":"${name}","fromStep":"two"\\}$`, 'm'));
    expect(await ok(alice, 'status', name)).toMatch(new RegExp(`^reruns\\s+\\["${rerunName}"\\]$`, 'm'));
  });

  it('given an event type, when emitted on the cluster, then the operator records it in the namespace; bad input is one line and a usage exit', async () => {
    const eventId = (await ok(alice, 'event', 'emit', 'order.created', '--key', 'o-1', '--id', 'evt-1')).trim();
    // Recorded in the namespace the CLI was pointed at (-n), which is the project on a cluster.
    expect(await operator.store.getEvent('team-c', eventId)).toMatchObject({ project: 'team-c', type: 'order.created', subject: 'o-1' });
    expect((await as(bob, 'event', 'emit', 'order.created')).output).toContain('may not create events.hyperspool.dev in namespace team-c');

    const badContext = await spool(['runs', '--kubeconfig', alice, '--context', 'nowhere'], { cwd: dir });
    expect(badContext).toMatchObject({ code: 2, output: "spool: the kubeconfig has no context 'nowhere'\n" });
    const missing = await as(alice, 'status', 'no-such-run');
    expect(missing).toMatchObject({ code: 1, output: 'spool: Run no-such-run in namespace team-c not found\n' });
    const throttled = await as(alice, 'submit', 'wait-for-go.sh', '--throttle', '2/1m');
    expect(throttled.code).toBe(2);
    expect(throttled.output).toContain('throttle belongs in the pipeline document');
  });

  it("given the pod's two containers as real processes, then the script suspends and resumes in a second pod, and spool logs shows both passes' output", async () => {
    const runId = (await ok(alice, 'submit', 'nap.sh')).trim();
    const key = runId.slice(runId.lastIndexOf(':') + 1);
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const pass1 = await whenPodRuns(cluster, operator.url, job1);
    // The agent ended the script at the sleep: the pod completed and holds nothing while the run waits.
    expect(pass1).toMatchObject({ code: 0, output: 'one\n' });

    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.labels?.['hyperspool.dev/pass'] === '2'), 15_000);
    // Step a replays without printing its output into the log a second time.
    expect(await whenPodRuns(cluster, operator.url, job2)).toMatchObject({ code: 0, output: 'two\ndone\n' });
    await eventually('phase Succeeded', async () => (await ok(alice, 'status', runId)).includes('succeeded'));
    expect(await ok(alice, 'logs', runId)).toBe('one\ntwo\ndone\n');
  });

  it('given the refund pipeline as a Workflow, when its gate is approved with spool approve, then only ask and refund run and the Run succeeds', async () => {
    const kubelet = startKubelet(cluster, operator.url);
    try {
      const runId = (await ok(alice, 'submit', 'refund.yaml')).trim();
      const workflow = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-c', plural: 'workflows', name: 'refund' })) as {
        spec: { filename: string };
      };
      expect(workflow.spec.filename).toBe('refund.yaml');
      await eventually('the gate to wait', async () => (await operator.store.getRun(runId))?.awaiting === 'approval ask', 30_000);
      const name = (JSON.parse(await ok(alice, 'runs', '--json')) as { name: string; id: string }[]).find((row) => row.id === runId)?.name ?? '';
      expect(await ok(alice, 'approve', name, 'ask')).toBe(`approved ask of ${name}\n`);

      await eventually('the pipeline to succeed', async () => (await operator.store.getRun(runId))?.status === 'succeeded', 60_000);
      const children = (await operator.store.listRuns({ limit: 200 })).filter((run) => run.parentId === runId);
      expect(children.map((child) => child.workflow.slice(child.workflow.indexOf('#') + 1)).sort()).toEqual(['ask', 'refund']);
      expect(await ok(alice, 'logs', runId)).toContain('refunded order 1042\n');
      await untilPhase(`run ${name}`, () => getRun(cluster, name), 'Succeeded');
    } finally {
      await kubelet.stop();
    }
  });

  it('given a Handler resource, when the same event is emitted twice with one id, then one run starts, and it gets a Run resource', async () => {
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-c',
      plural: 'workflows',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'greet' }, spec: { filename: 'greet.sh', script: 'spool step hi -- echo hi\n' } },
    });
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-c',
      plural: 'handlers',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Handler', metadata: { name: 'on-signup' }, spec: { event: 'user.signed_up', workflowRef: { name: 'greet' } } },
    });
    type WithReady = { status?: { conditions?: { type: string; status: string }[] } };
    await eventually('the Handler Ready', async () => {
      const handler = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-c', plural: 'handlers', name: 'on-signup' })) as WithReady;
      return handler.status?.conditions?.find((condition) => condition.type === 'Ready')?.status === 'True';
    });

    const first = (await ok(alice, 'event', 'emit', 'user.signed_up', '--id', 'signup-7', '--json'));
    const again = (await ok(alice, 'event', 'emit', 'user.signed_up', '--id', 'signup-7', '--json'));
    const [runId] = (JSON.parse(first) as { runs: string[] }).runs;
    expect(runId).toMatch(/^k8s:team-c:/);
    expect((JSON.parse(again) as { runs: string[] }).runs).toEqual([runId]);
    const key = runId?.slice(runId.lastIndexOf(':') + 1) ?? '';
    const mirrored = await eventually('its Run resource', async () => (await listRuns()).find((run) => run.metadata.labels?.['hyperspool.dev/run'] === key));
    expect(mirrored.spec.workflowRef.name).toBe('greet');
    expect((await listRuns()).filter((run) => run.spec.workflowRef.name === 'greet')).toHaveLength(1);
    // Named from its Handler, labelled with it and its Workflow, and owned by it.
    expect(mirrored.metadata.name).toBe(`on-signup-${key.slice(4, 12)}`);
    expect(mirrored.metadata.labels).toMatchObject({ 'hyperspool.dev/handler': 'on-signup', 'hyperspool.dev/workflow': 'greet' });
    expect(mirrored.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Handler', name: 'on-signup' })]);
    const selected = await ok(alice, 'runs', '--json');
    expect(selected).toContain(mirrored.metadata.name);

    // Without --json, the run it started by the name kubectl get runs shows, not its id.
    const named = await ok(alice, 'event', 'emit', 'user.signed_up', '--id', 'signup-8');
    const [, eventId, runName] = /^(\S+) started (\S+)\n$/.exec(named) ?? [];
    expect(runName).toMatch(/^on-signup-[a-z0-9]{8}$/);
    const run = (await listRuns()).find((each) => each.metadata.name === runName);
    expect(run?.metadata.labels?.['hyperspool.dev/handler']).toBe('on-signup');
    expect((await operator.store.getEvent('team-c', eventId ?? ''))?.type).toBe('user.signed_up');
  });
});

type Listed = { metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] }; spec: { workflowRef: { name: string } } };
async function listRunsIn(cluster: Cluster): Promise<Listed[]> {
  const list = (await cluster.custom.listNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'runs' })) as {
    items: Listed[];
  };
  return list.items;
}
