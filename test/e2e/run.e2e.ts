// Hyperspool on a real cluster: config/ installed as users install it (the operator's two
// replicas and a PostgreSQL run as pods), and each pass of a run is a Job whose pod really runs
// `spool agent` and `spool pass` from the hyperspool/runner:dev image. People act through the
// `spool` CLI with a kubeconfig, as a ServiceAccount with the roles of config/rbac/user_roles.yaml.
//
//   npm run test:e2e        (on the local node of hack/local-cluster.sh: needs root)
//   hack/kind.sh            (the same suite on kind)
//
// See test/e2e/support/cluster.ts for which cluster and which images.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { untilPhase, deployHyperspool, E2E_LABEL, eventually, leaderPod, openCluster, repo, sh, SYSTEM, type Cluster } from './support/cluster.js';
import { startPrometheus } from './support/prometheus.js';

const SCRIPT = 'spool step a -- echo one\nspool sleep 10s\nspool step b -- echo two\n';

interface RunResource {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { workflowRef: { name: string }; input?: unknown };
  status?: { runId?: string; phase?: string; awaiting?: string; passes?: number; message?: string };
}

interface PodResource {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { phase?: string };
}

describe('Hyperspool on a real cluster', () => {
  const runLabel = `e2e-${Date.now().toString(36)}`;
  const namespace = runLabel;
  let cluster: Cluster;
  /** A kubeconfig whose user is a ServiceAccount token with edit in the namespace and the CLI's role. */
  let userConfig = '';

  const kubectl = (...args: string[]): Promise<string> => cluster.kubectl(...args);
  const getJson = <T>(...args: string[]): Promise<T> => cluster.getJson<T>(...args);
  const spool = (...args: string[]): Promise<string> =>
    sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', userConfig, '-n', namespace]);
  const phaseOf = (run: string): Promise<RunResource> => getJson<RunResource>('-n', namespace, 'run', run);
  /** Waits for the run to reach this phase; a run that fails on the way fails the test with the operator's log. */
  const whenRun = (run: string, phase: 'Waiting' | 'Succeeded', timeoutMs = 120_000): Promise<RunResource> =>
    untilPhase(run, () => phaseOf(run), phase, timeoutMs, () => cluster.operatorLogs());

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    // The controller manager makes each namespace's `default` ServiceAccount, which pass pods run as.
    await eventually('the default ServiceAccount', () => kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
  });

  afterAll(async () => {
    if (!cluster) return;
    // What this run made: its namespace, and its RoleBindings in hyperspool-system. The install
    // (config/, PostgreSQL) stays for the next run, and for a look at what happened.
    if (!process.env.HYPERSPOOL_E2E_KEEP) {
      await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
      await kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    }
    await cluster.close();
  });

  /** Applies a Workflow of this script and a Run of it; answers the run's key once the operator labels it. */
  async function givenRunOf(name: string, filename: string, script: string, settings: object = {}): Promise<string> {
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, namespace }, spec: { filename, script, ...settings } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: `${name}-1`, namespace }, spec: { workflowRef: { name } } },
    );
    return eventually('the run key label', async () => (await phaseOf(`${name}-1`)).metadata.labels?.['hyperspool.dev/run']);
  }

  const podsOf = async (key: string): Promise<PodResource[]> =>
    (await getJson<{ items: PodResource[] }>('-n', namespace, 'pods', '-l', `hyperspool.dev/run=${key}`)).items;

  it('given a Workflow that steps, sleeps 10s and steps again, then its Run ends Succeeded after 2 passes, with no pod of the run during the sleep', async () => {
    const started = Date.now();
    const key = await givenRunOf('nap', 'nap.sh', SCRIPT);

    // Pass 1 runs step a, then the sleep suspends the run: its pod ends, and none runs while it waits.
    const waiting = await whenRun('nap-1', 'Waiting');
    const firstPassAt = Date.now() - started;
    expect(waiting.status?.awaiting).toMatch(/^timer /);
    // No pod of the run exists while it waits: the operator deletes a suspended pass's Job.
    await eventually('no pod of the run', async () => (await podsOf(key)).length === 0, 20_000);
    // Step a's output reached the run's log through the agent (the pod and its log are gone).
    expect(await spool('logs', 'nap-1')).toBe('one\n');
    expect((await phaseOf('nap-1')).status?.phase).toBe('Waiting');

    const done = await whenRun('nap-1', 'Succeeded');
    expect(done.status?.passes, await cluster.lostPasses(namespace, 'nap-1')).toBe(2);
    // Pass 1's Job went when its pass suspended; pass 2's (the run's last) stays for kubectl logs.
    const pods = await eventually(
      'pass 2 pod finished',
      async () => {
        const all = await podsOf(key);
        return all.every((pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') && all;
      },
      30_000,
    );
    expect(pods.map((pod) => [pod.metadata.labels?.['hyperspool.dev/pass'], pod.status?.phase])).toEqual([['2', 'Succeeded']]);
    // Step a replays from the journal without running again: pass 2 prints only step b's line.
    expect(await kubectl('-n', namespace, 'logs', 'job/nap-1-p2', '-c', 'script')).toBe('two\n');
    expect(await spool('logs', 'nap-1')).toBe('one\ntwo\n');
    console.log(`e2e: pass 1 suspended after ${firstPassAt}ms; the run succeeded after ${Date.now() - started}ms`);
  });

  it("given the saga recipe as a Workflow, then its pod's log shows the seed's lines and the Run ends Failed", async () => {
    await givenRunOf('saga', 'saga.sh', readFileSync(join(repo, 'examples', 'saga.sh'), 'utf8'));
    const failed = await eventually('the saga Failed', async () => {
      const resource = await phaseOf('saga-1');
      return resource.status?.phase === 'Failed' && resource;
    }, 120_000);
    // The Run tells the story: the exit, the step that failed, the last thing printed.
    expect(failed.status?.message).toBe("script exited 1 (step 'book-car' exited 1: no cars left)");
    // A Run applied with kubectl is labelled with its Workflow, as the operator's own Runs are.
    expect(failed.metadata.labels?.['hyperspool.dev/workflow']).toBe('saga');
    const log = await eventually('the saga pod log', () => kubectl('-n', namespace, 'logs', 'job/saga-1-p1', '-c', 'script'));
    expect(log.split('\n').filter(Boolean)).toEqual(['no cars left', 'cancelled HT-2207', 'cancelled FL-881']);
  });

  it('given runs in several phases, then kubectl get runs shows their phase, what they await and their passes', async () => {
    await givenRunOf('parked', 'parked.sh', 'spool step a -- true\nspool wait signal never --timeout 1h\n');
    await eventually('parked awaiting its signal', async () => (await phaseOf('parked-1')).status?.awaiting === 'signal never', 120_000);
    const table = (await kubectl('-n', namespace, 'get', 'runs')).trimEnd().split('\n');
    expect(table[0]).toMatch(/^NAME\s+WORKFLOW\s+PHASE\s+SUBSTATE\s+AWAITING\s+PASSES\s+DURATION\s+MESSAGE\s+AGE$/);
    // An ended run (the nap test's) shows how long it took.
    expect(table.find((line) => line.startsWith('nap-1 '))).toMatch(/^nap-1\s+nap\s+Succeeded\s+2\s+\d+s\s+\S+$/);
    expect(table.find((line) => line.startsWith('parked-1 '))).toMatch(/^parked-1\s+parked\s+Waiting\s+awaiting_signal\s+signal never\s+1\s+\S+$/);
    await spool('cancel', 'parked-1');
  });

  it("given a pass's pod deleted in the middle of a step, then the pass is dispatched again: the finished step is not re-run, the interrupted one is, and the run finishes", async () => {
    const key = await givenRunOf('slow', 'slow.sh', "spool step a -- echo one\nspool step slow -- sh -c 'echo half; sleep 6'\necho finished\n");
    const pod = await eventually('pass 1 in step slow', async () => {
      const running = (await podsOf(key)).find((each) => each.status?.phase === 'Running');
      if (!running) return null;
      const log = await kubectl('-n', namespace, 'logs', running.metadata.name, '-c', 'script');
      return log.includes('half') && running;
    }, 120_000);
    // A graceful delete, as a drain or an eviction does it: SIGTERM, then the grace period.
    await kubectl('-n', namespace, 'delete', 'pod', pod.metadata.name, '--wait=false');

    const done = await whenRun('slow-1', 'Succeeded');
    expect(done.status?.passes).toBe(2);
    // Step a replays without printing again; step slow runs again; the script goes on to its end.
    expect(await eventually('pass 2 log', () => kubectl('-n', namespace, 'logs', 'job/slow-1-p2', '-c', 'script'))).toBe('half\nfinished\n');
    // What the interrupted step printed in pass 1 is kept in the run's log, before pass 2's lines.
    expect(await spool('logs', 'slow-1', '--passes')).toBe('--- pass 1 ---\none\nhalf\n--- pass 2 ---\nhalf\nfinished\n');
  });

  it('given a long step, then what it prints reaches kubectl logs and spool logs while it runs, and a cancel keeps it', async () => {
    await givenRunOf('long', 'long.sh', "spool step build -- sh -c 'echo compiling; sleep 300; echo linked'\n");
    await eventually('compiling in the pod log', async () => (await kubectl('-n', namespace, 'logs', 'job/long-1-p1', '-c', 'script')) === 'compiling\n', 120_000);
    await eventually('compiling in spool logs', async () => (await spool('logs', 'long-1')) === 'compiling\n', 10_000);
    expect((await phaseOf('long-1')).status?.phase).toBe('Running');
    await spool('cancel', 'long-1');
    await untilPhase('run long-1', () => phaseOf('long-1'), 'Cancelled', 60_000);
    expect(await spool('logs', 'long-1')).toBe('compiling\n');
  });

  it('given runs sleeping, when the leading operator pod is killed, then another replica picks them up and they finish on time', async () => {
    const naps = ['nap10', 'nap10b'];
    for (const name of naps) await givenRunOf(name, `${name}.sh`, 'spool sleep 10s\necho woke\n');
    for (const name of naps) await whenRun(`${name}-1`, 'Waiting');
    const sleptAt = Date.now();
    const leader = await leaderPod(cluster);
    expect(leader).toMatch(/^hyperspool-operator-/);
    // No grace: the process dies with its Lease still held, as on a lost node.
    await kubectl('-n', SYSTEM, 'delete', 'pod', leader, '--grace-period=0', '--force');

    const done = await Promise.all(naps.map((name) => whenRun(`${name}-1`, 'Succeeded', 60_000)));
    // On time: the 10 s sleep, the 4 s lease (test/e2e/deploy) and a pass pod's start, not plus
    // minutes of a lost leader. The slack is for a loaded 2-core machine, where 20.6 s was seen.
    expect(Date.now() - sleptAt).toBeLessThan(10_000 + 4_000 + 16_000);
    expect(done.map((run) => run.status?.passes)).toEqual([2, 2]);
    expect(await leaderPod(cluster)).not.toBe(leader);
    // The Deployment replaces the killed replica; both serve again.
    await kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-operator', '--timeout=120s');
  });

  it('given a Handler, when the same event is emitted twice, then one Run starts, and its pod runs', async () => {
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'welcome', namespace }, spec: { filename: 'welcome.sh', script: 'spool step hi -- echo hi\n' } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Handler', metadata: { name: 'on-signup', namespace }, spec: { event: 'user.signed_up', workflowRef: { name: 'welcome' } } },
    );
    await eventually('the Handler Ready', async () => (await kubectl('-n', namespace, 'get', 'handler', 'on-signup', '-o', 'jsonpath={.status.conditions[0].status}')) === 'True');

    const emit = async (): Promise<string[]> =>
      (JSON.parse(await spool('event', 'emit', 'user.signed_up', '--id', 'signup-42', '--payload', '{"user":"ada"}', '--json')) as { runs: string[] }).runs;
    const first = await emit();
    expect(first).toHaveLength(1);
    expect(await emit()).toEqual(first);
    const key = first[0]?.slice(first[0].lastIndexOf(':') + 1) ?? '';
    const runs = await eventually('its Run Succeeded', async () => {
      const mine = (await getJson<{ items: RunResource[] }>('-n', namespace, 'runs')).items.filter((run) => run.spec.workflowRef.name === 'welcome');
      return mine.length === 1 && mine[0]?.metadata.labels?.['hyperspool.dev/run'] === key && mine[0].status?.phase === 'Succeeded' && mine;
    }, 120_000);
    expect(runs).toHaveLength(1);
  });

  it('given a Schedule every 3s of a run that takes 5s, then runs start on its ticks and a tick while one runs is skipped', async () => {
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'tick', namespace }, spec: { filename: 'tick.sh', script: 'spool step work -- sleep 5\n' } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'every-3s', namespace }, spec: { every: '3s', workflowRef: { name: 'tick' } } },
    );
    type ScheduleResource = { status?: { skipped?: number; lastScheduleTime?: string } };
    const schedule = await eventually('a skipped tick and a second run', async () => {
      const got = await getJson<ScheduleResource>('-n', namespace, 'schedule', 'every-3s');
      const ticks = (await getJson<{ items: RunResource[] }>('-n', namespace, 'runs')).items.filter((run) => run.spec.workflowRef.name === 'tick');
      return (got.status?.skipped ?? 0) >= 1 && ticks.length >= 2 && { got, ticks };
    }, 60_000);
    expect(schedule.got.status?.lastScheduleTime).toBeDefined();
    // One Run per tick: each schedule run's input names its tick. Each is named from the Schedule
    // and its tick (as a CronJob's Jobs are), and found by the Schedule's label.
    const runs = (await getJson<{ items: RunResource[] }>('-n', namespace, 'runs', '-l', 'hyperspool.dev/schedule=every-3s')).items;
    const ticks = runs.map((run) => (run.spec.input as { tick?: string } | undefined)?.tick);
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks.every((tick) => typeof tick === 'string')).toBe(true);
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const run of runs) expect(run.metadata.name).toBe(`every-3s-${Math.floor(Date.parse((run.spec.input as { tick: string }).tick) / 1000)}`);
    // Deleting the Schedule takes its Runs with it (their ownerReference).
    await kubectl('-n', namespace, 'delete', 'schedule', 'every-3s');
    await eventually('the schedule\'s Runs gone', async () => (await getJson<{ items: RunResource[] }>('-n', namespace, 'runs', '-l', 'hyperspool.dev/schedule=every-3s')).items.length === 0, 60_000);
  });

  it('given a Run waiting on a signal, when spool signal is run with a kubeconfig, then it wakes and finishes', async () => {
    await givenRunOf('gate', 'gate.sh', 'echo "got $(spool wait signal go --timeout 1h)"\n');
    await eventually('gate awaiting its signal', async () => (await phaseOf('gate-1')).status?.awaiting === 'signal go', 120_000);
    // Through the API server's service proxy to the operator's Service, as the person's token.
    expect(await spool('signal', 'gate-1', 'go', 'yes')).toBe('signal go queued for gate-1\n');
    await whenRun('gate-1', 'Succeeded');
    // The run ends when the script's end is reported; the kubelet's word on the pod may come later.
    expect(await eventually('pass 2 log', () => kubectl('-n', namespace, 'logs', 'job/gate-1-p2', '-c', 'script'))).toBe('got yes\n');
  });

  it("given a Workflow whose image has bash and python3 but no node and no Hyperspool files, then a bash script steps, sleeps across two pods and takes a signal, and a .py script calls spool as a subprocess", async () => {
    // hyperspool/plain:dev (hack/images.sh): bash, python3, busybox; root by default, as most images.
    const plain = { image: 'hyperspool/plain:dev' };
    const bash = [
      'spool step a -- echo one',
      'spool sleep 2s',
      'echo "got $(spool wait signal go --timeout 1h)"',
      'spool step b -- echo two',
      'command -v node || echo "no node here"',
      '[ -e /app ] || echo "no /app here"',
      '',
    ].join('\n');
    const python = [
      'import subprocess',
      'def spool(*args): return subprocess.run(["spool", *args], check=True, capture_output=True, text=True).stdout',
      'print("python got", spool("step", "greet", "--", "echo", "hello").strip())',
      'spool("sleep", "1s")',
      'print("python after", spool("step", "after", "--", "echo", "the sleep").strip())',
      '',
    ].join('\n');
    const [bashKey, pyKey] = await Promise.all([givenRunOf('plain-sh', 'plain.sh', bash, plain), givenRunOf('plain-py', 'plain.py', python, plain)]);
    await eventually('plain-sh awaiting its signal', async () => (await phaseOf('plain-sh-1')).status?.awaiting === 'signal go', 120_000);
    expect(await spool('signal', 'plain-sh-1', 'go', 'yes')).toBe('signal go queued for plain-sh-1\n');
    expect((await whenRun('plain-sh-1', 'Succeeded')).status?.passes, await cluster.lostPasses(namespace, 'plain-sh-1')).toBe(3);
    expect(await spool('logs', 'plain-sh-1')).toBe('one\ngot yes\ntwo\nno node here\nno /app here\n');
    const py = await whenRun('plain-py-1', 'Succeeded');
    expect(py.status?.passes, await cluster.lostPasses(namespace, 'plain-py-1')).toBe(2);
    expect(await spool('logs', 'plain-py-1')).toContain('python after the sleep\n');
    // Each pass was a pod of the Workflow's image.
    const images = await kubectl('-n', namespace, 'get', 'pods', '-l', `hyperspool.dev/run in (${bashKey},${pyKey})`, '-o', 'jsonpath={.items[*].spec.containers[0].image}');
    expect(new Set(images.split(' ').filter(Boolean))).toEqual(new Set(['hyperspool/plain:dev']));
  });

  it('given a Workflow taking an API key from a Secret and a memory limit, then its step sees the key and its pod has the limit', async () => {
    await cluster.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'crm-api', namespace }, stringData: { key: 'sk-e2e-1234' } });
    const script = [
      'spool step key -- sh -c \'echo "key ends in ${API_KEY#sk-e2e-}"\'',
      // cgroup v1 on this node, v2 elsewhere: the limit the kernel enforces on the script.
      'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max',
      '',
    ].join('\n');
    const key = await givenRunOf('keyed', 'keyed.sh', script, {
      env: [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'crm-api', key: 'key' } } }],
      template: { resources: { limits: { memory: '200Mi' } } },
    });
    await whenRun('keyed-1', 'Succeeded');
    expect(await spool('logs', 'keyed-1')).toBe(`key ends in 1234\n${200 * 1024 * 1024}\n`);
    const limit = await kubectl('-n', namespace, 'get', 'pods', '-l', `hyperspool.dev/run=${key}`, '-o', 'jsonpath={.items[0].spec.containers[0].resources.limits.memory}');
    expect(limit).toBe('200Mi');
  });

  it('given the Python preview-environment workflow in the default runner image, then it deploys once, waits for pr.closed with no pod, and tears down what it deployed', async () => {
    const script = readFileSync(join(repo, 'examples', 'preview.py'), 'utf8');
    const key = await givenRunOf('preview', 'preview.py', script);
    await eventually('preview awaiting pr.closed', async () => (await phaseOf('preview-1')).status?.awaiting?.startsWith('event pr.closed'), 120_000);
    await eventually('no pod of the run while it waits', async () => (await podsOf(key)).length === 0, 30_000);
    await spool('event', 'emit', 'pr.closed', '--payload', '{"pr":7}');
    expect((await whenRun('preview-1', 'Succeeded')).status?.passes, await cluster.lostPasses(namespace, 'preview-1')).toBe(2);
    // deploy ran once, in pass 1; pass 2 got its recorded value back. (The SDK may also say, on
    // stderr, that the script suspended, if it gets to before the agent ends it.)
    const log = (await spool('logs', 'preview-1')).replace(/^spool: script suspended awaiting .*\n/m, '');
    expect(log).toBe('deploying a preview to pr-7.preview.example\ntearing down https://pr-7.preview.example\n');
  });

  it("given a Workflow whose image cannot be pulled, then its Run says why within seconds; an invalid image name fails the Run at once", async () => {
    type Conditions = { status?: { conditions?: { type: string; reason: string; message: string }[] } };
    await givenRunOf('unpullable', 'unpullable.sh', 'true\n', { image: 'hyperspool/not-built-anywhere:dev' });
    const told = await eventually('a PodReady=False condition', async () => {
      const run = (await phaseOf('unpullable-1')) as RunResource & Conditions;
      return run.status?.conditions?.find((c) => c.type === 'PodReady');
    }, 60_000);
    // ErrImagePull and ImagePullBackOff, which the kubelet alternates, are one reason; the Run's
    // message is one short line, and its Events keep one text however the kubelet's changes.
    expect(told.reason).toBe('ImagePullBackOff');
    expect((await phaseOf('unpullable-1')).status?.message).toBe('pass 1: the script container cannot start: ImagePullBackOff (image "hyperspool/not-built-anywhere:dev")');
    const warnings = await getJson<{ items: { type: string; reason: string; message: string }[] }>('-n', namespace, 'events', '--field-selector', 'involvedObject.name=unpullable-1');
    expect([...new Set(warnings.items.filter((event) => event.type === 'Warning').map((event) => `${event.reason}: ${event.message}`))]).toEqual([
      'ImagePullBackOff: pass 1: the script container cannot start: ImagePullBackOff (image "hyperspool/not-built-anywhere:dev")',
    ]);
    await kubectl('-n', namespace, 'delete', 'run', 'unpullable-1');

    await givenRunOf('misnamed', 'misnamed.sh', 'true\n', { image: 'Hyperspool/UPPER:case' });
    const failed = await eventually('misnamed-1 Failed', async () => {
      const run = await phaseOf('misnamed-1');
      return run.status?.phase === 'Failed' && run;
    }, 60_000);
    expect(failed.status?.message).toBe('pass 1\'s pod cannot start: the script container cannot start: InvalidImageName (image "Hyperspool/UPPER:case")');
  });

  it("given a Run waiting on a signal, when signalled by a person with a client certificate and config/rbac's edit role, then it wakes (through the aggregated API api.hyperspool.dev); a person RBAC lets only view is refused", async () => {
    await givenRunOf('certgate', 'certgate.sh', 'spool wait signal go\necho "got it"\n');
    await eventually('certgate-1 awaiting its signal', async () => (await phaseOf('certgate-1')).status?.awaiting === 'signal go', 120_000);
    const erin = await cluster.givenCertificatePerson(namespace, 'erin', 'hyperspool-edit');
    const asErin = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', erin, '-n', namespace]);
    const viewer = await cluster.givenPerson(namespace, 'viewer', 'hyperspool-view');
    const refused = await sh(process.execPath, [join(repo, 'bin', 'spool'), 'signal', 'certgate-1', 'go', '--kubeconfig', viewer, '-n', namespace]).then(
      () => 'accepted',
      (error: Error) => error.message,
    );
    expect(refused).toContain(`cannot create resource "runs/signal" in API group "api.hyperspool.dev" in the namespace "${namespace}"`);
    expect(await asErin('signal', 'certgate-1', 'go', 'yes')).toBe('signal go queued for certgate-1\n');
    await whenRun('certgate-1', 'Succeeded');
    expect(await asErin('logs', 'certgate-1')).toBe('yes\ngot it\n');
  });

  it("given a Run waiting on a signal, when a person with a client certificate and only config/rbac's view role replays it with spool replay, then its script replays cleanly, a renamed step diverges there, and its journal is unchanged", async () => {
    const script = 'spool step a -- echo one\nspool wait signal go\n';
    await givenRunOf('replayed', 'replayed.sh', script);
    await eventually('replayed-1 awaiting its signal', async () => (await phaseOf('replayed-1')).status?.awaiting === 'signal go', 120_000);
    const rita = await cluster.givenCertificatePerson(namespace, 'rita', 'hyperspool-view');
    const asRita = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', rita, '-n', namespace]);
    const here = mkdtempSync(join(tmpdir(), 'spool-e2e-replay-'));
    writeFileSync(join(here, 'replayed.sh'), script);
    writeFileSync(join(here, 'renamed.sh'), script.replace('step a', 'step b'));
    const before = await asRita('journal', 'replayed-1', '--json');

    expect(await asRita('replay', 'replayed-1', '--script', join(here, 'replayed.sh'))).toContain('replays cleanly: 2 calls');
    const diverged = await asRita('replay', 'replayed-1', '--script', join(here, 'renamed.sh')).then(
      () => 'exit 0',
      (error: Error) => error.message,
    );
    expect(diverged).toContain('diverges at call 1 (');
    expect(diverged).toContain('the journal recorded `step a` there, but the script reached `step b`');
    expect(await asRita('journal', 'replayed-1', '--json')).toBe(before);
    expect((await phaseOf('replayed-1')).status?.passes).toBe(1);
  });

  it("given a Run whose steps print random values, when a person with a client certificate and config/rbac's edit role reruns it from step two with spool rerun, then a new Run names it (spec.rerunOf, a label), its step one is the old one's and its step two (value and idempotency key) is new, and the old journal is unchanged", async () => {
    const script = 'spool step one -- sh -c \'echo "$(od -An -N8 -tx8 /dev/urandom) $SPOOL_IDEMPOTENCY_KEY"\'\nspool step two -- sh -c \'echo "$(od -An -N8 -tx8 /dev/urandom) $SPOOL_IDEMPOTENCY_KEY"\'\n';
    await givenRunOf('rerolled', 'rerolled.sh', script);
    await whenRun('rerolled-1', 'Succeeded');
    const rene = await cluster.givenCertificatePerson(namespace, 'rene', 'hyperspool-edit');
    const asRene = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', rene, '-n', namespace]);
    type Entry = { kind: string; name: string; position: number; data: Record<string, unknown> };
    const journal = async (run: string): Promise<Entry[]> => JSON.parse(await asRene('journal', run, '--json')) as Entry[];
    const result = (entries: Entry[], step: string) => entries.find((entry) => entry.kind === 'result' && entry.name === step)?.data;
    const before = await journal('rerolled-1');
    const refused = await asRene('rerun', 'rerolled-1', '--from-step', 'three').then(() => 'exit 0', (error: Error) => error.message);
    expect(refused).toContain("step 'three'");

    const newId = (await asRene('rerun', 'rerolled-1', '--from-step', 'two')).trim();
    const reruns = await getJson<{ items: RunResource[] }>('-n', namespace, 'runs', '-l', 'hyperspool.dev/rerun-of=rerolled-1');
    expect(reruns.items).toHaveLength(1);
    const name = reruns.items[0]?.metadata.name ?? '';
    expect((await phaseOf(name)).status?.runId).toBe(newId);
    await whenRun(name, 'Succeeded');
    const after = await journal(name);
    expect(result(after, 'one')).toEqual(result(before, 'one'));
    expect(String(result(after, 'two')?.stdout).split(' ').at(-1)).not.toBe(String(result(before, 'two')?.stdout).split(' ').at(-1));
    expect(result(after, 'two')).not.toEqual(result(before, 'two'));
    expect(await journal('rerolled-1')).toEqual(before);
  });

  // Last: it restarts the database every test before it used.
  it("given the install from config/quickstart, then PostgreSQL keeps the journal on its claim: a new pod of it still has an earlier run's log", async () => {
    const claim = await getJson<{ status?: { phase?: string } }>('-n', SYSTEM, 'pvc', 'hyperspool-postgres-data');
    expect(claim.status?.phase).toBe('Bound');
    const before = (await getJson<{ items: PodResource[] }>('-n', SYSTEM, 'pods', '-l', 'app.kubernetes.io/name=hyperspool-postgres')).items.map((pod) => pod.metadata.name);
    await kubectl('-n', SYSTEM, 'delete', 'pod', '-l', 'app.kubernetes.io/name=hyperspool-postgres');
    await eventually('a new PostgreSQL pod ready', async () => {
      const pods = (await getJson<{ items: (PodResource & { status?: { conditions?: { type: string; status: string }[] } })[] }>('-n', SYSTEM, 'pods', '-l', 'app.kubernetes.io/name=hyperspool-postgres')).items;
      return pods.some((pod) => !before.includes(pod.metadata.name) && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }, 120_000);
    expect(await eventually('the log through the new pod', () => spool('logs', 'nap-1').catch(() => ''), 60_000)).toBe('one\ntwo\n');
  });

  it.skipIf(Boolean(process.env.HYPERSPOOL_E2E_KUBECONFIG))(
    'given a real Prometheus scraping both operator replicas as config/prometheus/monitor.yaml selects them, when a Run fails, then HyperspoolRunsFailing fires for its namespace (the rule with a 1m window), and not before',
    async () => {
      // The alert as shipped, its 15-minute window shortened so a test can watch it.
      type Rules = { spec: { groups: { name: string; rules: { alert: string; expr: string }[] }[] } };
      const shipped = parse(readFileSync(join(repo, 'config', 'prometheus', 'rules.yaml'), 'utf8')) as Rules;
      const failing = shipped.spec.groups.flatMap((g) => g.rules).find((r) => r.alert === 'HyperspoolRunsFailing');
      expect(failing?.expr).toContain('[15m]');
      const prometheus = await startPrometheus(kubectl, [{ name: 'hyperspool-e2e', rules: [{ ...failing, expr: failing?.expr.replace('[15m]', '[1m]') }] }]);
      try {
        const replicas = (await getJson<{ items: PodResource[] }>('-n', SYSTEM, 'pods', '-l', 'app.kubernetes.io/component=operator')).items.map((p) => p.metadata.name).sort();
        const scraped = await eventually('both replicas scraped', async () => {
          const up = (await prometheus.targets()).filter((t) => t.health === 'up');
          return up.length === replicas.length && up;
        }, 60_000).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${prometheus.log()}`)));
        expect(scraped.map((t) => t.labels.pod).sort()).toEqual(replicas);
        const ours = async () => (await prometheus.alerts()).filter((a) => a.labels.alertname === 'HyperspoolRunsFailing' && a.labels.namespace === namespace);
        // A few evaluations with the counter as it stands: quiet.
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        expect(await ours()).toEqual([]);

        await givenRunOf('doomed', 'doomed.sh', 'echo about to fail\nexit 3\n');
        await untilPhase('run doomed-1', () => phaseOf('doomed-1'), 'Failed', 120_000);
        const fired = await eventually('HyperspoolRunsFailing firing', async () => (await ours()).find((a) => a.state === 'firing'), 60_000);
        expect(fired.labels).toMatchObject({ severity: 'warning', namespace });
        expect(fired.annotations.summary).toBe(`Hyperspool runs are failing in ${namespace}`);
      } finally {
        await prometheus.stop();
      }
    },
  );
});
