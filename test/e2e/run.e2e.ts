// A Run on a real node: the operator runs on the host (against the local cluster of
// hack/local-cluster.sh, with a throwaway PostgreSQL), and each pass of the run is a Job whose pod
// really runs `spool agent` and `spool pass` from the hyperspool/runner:dev image.
//
//   npx vitest run --config test/e2e/vitest.config.ts
//
// Needs root. Brings the local cluster up unless it runs already (and then takes it down again;
// HYPERSPOOL_E2E_KEEP=1 leaves it up), builds dist/ and the runner image and imports it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const clusterScript = join(repo, 'hack', 'local-cluster.sh');
const imagesScript = join(repo, 'hack', 'images.sh');
/** Where pods reach the host: the host side of the node's veth (hack/local-cluster.sh). */
const HOST_IP = process.env.HYPERSPOOL_NODE_HOST_IP ?? '10.244.255.1';

const SCRIPT = 'spool step a -- echo one\nspool sleep 5s\nspool step b -- echo two\n';

interface RunResource {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { runId?: string; phase?: string; awaiting?: string; passes?: number; message?: string };
}

interface PodResource {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { phase?: string };
}

async function sh(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    return (await run(file, args, { encoding: 'utf8', maxBuffer: 64 << 20, env })).stdout;
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string; message?: string };
    throw new Error([failed.message, failed.stdout, failed.stderr].filter(Boolean).join('\n'));
  }
}

/** Polls until `check` answers something truthy (every 250 ms); fails after timeoutMs saying what it waited for. */
type Falsy = false | 0 | '' | null | undefined;

async function eventually<T>(what: string, check: () => Promise<T | Falsy>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

describe('a Run on a real single-node cluster', () => {
  let wasUp = false;
  let kubeconfig = '';
  let kubectlBin = '';
  let postgres: TestPostgres | undefined;
  let operator: ChildProcess | undefined;
  let operatorLog = '';
  const namespace = `e2e-${Date.now().toString(36)}`;

  const kubectl = (...args: string[]): Promise<string> => sh(kubectlBin, ['--kubeconfig', kubeconfig, ...args]);
  const getJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse(await kubectl('get', '-o', 'json', ...args)) as T;
  /** `kubectl apply` of these objects, through a temporary file. */
  const apply = async (...items: object[]): Promise<void> => {
    const dir = mkdtempSync(join(tmpdir(), 'hyperspool-e2e-'));
    try {
      writeFileSync(join(dir, 'objects.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
      await kubectl('apply', '-f', join(dir, 'objects.json'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  let operatorPort = 0;

  /** `spool operator` on the host, as the cluster's operator (a 3 s lease, so a successor leads soon). */
  async function startOperatorProcess(): Promise<void> {
    operatorPort = await freePort();
    const metricsPort = await freePort();
    const started = spawn(
      process.execPath,
      [
        join(repo, 'bin', 'spool'),
        'operator',
        '--port',
        String(operatorPort),
        '--metrics-port',
        String(metricsPort),
        '--namespace',
        'hyperspool-system',
        '--runner-image',
        'hyperspool/runner:dev',
        '--agent-server',
        `http://${HOST_IP}:${operatorPort}`,
        '--lease-duration',
        '3',
      ],
      {
        env: { ...process.env, KUBECONFIG: kubeconfig, DATABASE_URL: postgres?.url ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    operator = started;
    started.stdout?.on('data', (chunk: Buffer) => (operatorLog += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (operatorLog += chunk.toString()));
    await eventually(
      'the operator ready',
      async () => {
        if (started.exitCode !== null) throw new Error(`the operator exited: ${operatorLog}`);
        return (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok;
      },
      60_000,
    );
  }

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error('the e2e suite needs root (hack/local-cluster.sh makes a network namespace and cgroups)');
    wasUp = await sh('bash', [clusterScript, 'status']).then(
      () => true,
      () => false,
    );
    const up = await sh('bash', [clusterScript, 'up']);
    kubeconfig = /export KUBECONFIG=(\S+)/.exec(up)?.[1] ?? '';
    expect(kubeconfig).not.toBe('');
    kubectlBin = join(
      (await sh('bash', [join(repo, 'hack', 'build-k8s.sh'), 'kubectl'])).trim().split('\n').pop() ?? '',
      'kubectl',
    );

    // The image holds dist/ as it is now: build it first, so the pods run the code under test.
    await sh(join(repo, 'node_modules', '.bin', 'tsc'), ['-p', join(repo, 'tsconfig.build.json')]);
    await sh('bash', [imagesScript, 'runner']);

    await kubectl('apply', '-f', join(repo, 'crds'));
    await kubectl(
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/workflows.hyperspool.dev',
      'crd/runs.hyperspool.dev',
    );
    for (const ns of ['hyperspool-system', namespace]) {
      await kubectl('create', 'namespace', ns).catch((error: Error) => {
        if (!/AlreadyExists/.test(error.message)) throw error;
      });
    }
    // The controller manager makes each namespace's `default` ServiceAccount, which pass pods run as.
    await eventually('the default ServiceAccount', () => kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));

    postgres = await startPostgres();
    await startOperatorProcess();
  });

  afterAll(async () => {
    if (operator && operator.exitCode === null) {
      const exited = new Promise((resolve) => operator?.once('exit', resolve));
      operator.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (operator.exitCode === null) operator.kill('SIGKILL');
    }
    await postgres?.stop();
    if (kubeconfig && wasUp) await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
    // HYPERSPOOL_E2E_KEEP=1 leaves a cluster this suite started up, to look at what happened.
    if (!wasUp && !process.env.HYPERSPOOL_E2E_KEEP) await sh('bash', [clusterScript, 'down']);
  });

  it('given a Workflow that steps, sleeps 5s and steps again, then its Run ends Succeeded after 2 passes, with no pod of the run during the sleep', async () => {
    const started = Date.now();
    await apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'nap', namespace }, spec: { filename: 'nap.sh', script: SCRIPT } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: 'nap-1', namespace }, spec: { workflowRef: { name: 'nap' } } },
    );

    const key = await eventually(
      'the run key label',
      async () => (await getJson<RunResource>('-n', namespace, 'run', 'nap-1')).metadata.labels?.['hyperspool.dev/run'],
    );
    const podsOfRun = async (): Promise<PodResource[]> =>
      (await getJson<{ items: PodResource[] }>('-n', namespace, 'pods', '-l', `hyperspool.dev/run=${key}`)).items;

    // Pass 1 runs step a, then the sleep suspends the run: its pod ends, and none runs while it waits.
    const waiting = await eventually(
      'the run Waiting on its timer',
      async () => {
        const resource = await getJson<RunResource>('-n', namespace, 'run', 'nap-1');
        if (resource.status?.phase === 'Failed')
          throw new Error(`the run failed: ${resource.status.message}\n${operatorLog}`);
        return resource.status?.phase === 'Waiting' && resource;
      },
      120_000,
    );
    const firstPassAt = Date.now() - started;
    expect(waiting.status?.awaiting).toMatch(/^timer /);
    // No pod of the run exists while it waits: the operator deletes a suspended pass's Job.
    await eventually('no pod of the run', async () => (await podsOfRun()).length === 0, 20_000);
    // Step a's output reached the run's log through the agent (the pod and its log are gone).
    const store = await openStore({ databaseUrl: postgres?.url ?? '' });
    const log1 = (await store.readLogs(waiting.status?.runId ?? '')).map((line) => line.text).join('');
    await store.close();
    const stillWaiting = await getJson<RunResource>('-n', namespace, 'run', 'nap-1');
    expect(stillWaiting.status?.phase).toBe('Waiting');
    expect(log1).toBe('one\n');

    const done = await eventually(
      'the run Succeeded',
      async () => {
        const resource = await getJson<RunResource>('-n', namespace, 'run', 'nap-1');
        if (resource.status?.phase === 'Failed')
          throw new Error(`the run failed: ${resource.status.message}\n${operatorLog}`);
        return resource.status?.phase === 'Succeeded' && resource;
      },
      120_000,
    );
    expect(done.status?.passes).toBe(2);
    // The run ends when pass 2's script exits; its pod (the agent sidecar) stops a moment later.
    const pods = await eventually(
      'pass 2 pod finished',
      async () => {
        const all = await podsOfRun();
        return all.every((pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') && all;
      },
      30_000,
    );
    // Pass 1's Job went when its pass suspended; pass 2's (the run's last) stays for kubectl logs.
    expect(
      pods.filter((pod) => pod.metadata.labels?.['hyperspool.dev/pass'] === '2').map((pod) => pod.status?.phase),
    ).toEqual(['Succeeded']);
    const log2 = await kubectl('-n', namespace, 'logs', `job/${key}-p2`, '-c', 'script');
    console.log(`e2e: pass 1 log:\n${log1}\ne2e: pass 2 log:\n${log2}`);
    expect(log2).toContain('two');
    console.log(`e2e: pass 1 suspended after ${firstPassAt}ms; the run succeeded after ${Date.now() - started}ms`);
  });

  /** Applies a Workflow of this script and a Run of it; answers the run's key once the operator labels it. */
  async function givenRunOf(name: string, filename: string, script: string): Promise<string> {
    await apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, namespace }, spec: { filename, script } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: `${name}-1`, namespace }, spec: { workflowRef: { name } } },
    );
    return eventually('the run key label', async () => (await getJson<RunResource>('-n', namespace, 'run', `${name}-1`)).metadata.labels?.['hyperspool.dev/run']);
  }

  const phaseOf = async (run: string): Promise<RunResource> => getJson<RunResource>('-n', namespace, 'run', run);

  it("given the saga recipe as a Workflow, then its pod's log shows the seed's lines and the Run ends Failed", async () => {
    const key = await givenRunOf('saga', 'saga.sh', readFileSync(join(repo, 'examples', 'saga.sh'), 'utf8'));
    const failed = await eventually('the saga Failed', async () => {
      const resource = await phaseOf('saga-1');
      return resource.status?.phase === 'Failed' && resource;
    }, 120_000);
    expect(failed.status?.message).toBe('script exited 1');
    const log = await eventually('the saga pod log', () => kubectl('-n', namespace, 'logs', `job/${key}-p1`, '-c', 'script'));
    expect(log.split('\n').filter(Boolean)).toEqual(['no cars left', 'cancelled HT-2207', 'cancelled FL-881']);
    expect((await kubectl('-n', namespace, 'get', 'runs')).split('\n')[0]).toMatch(/^NAME\s+PHASE\s+AWAITING\s+PASSES\s+AGE/);
  });

  it("given a pass's pod deleted in the middle of a step, then the pass is dispatched again: the finished step is not re-run, the interrupted one is, and the run finishes", async () => {
    const key = await givenRunOf('slow', 'slow.sh', 'spool step a -- echo one\nspool step slow -- sleep 6\necho finished\n');
    const pod = await eventually('pass 1 in step slow', async () => {
      const pods = (await getJson<{ items: PodResource[] }>('-n', namespace, 'pods', '-l', `hyperspool.dev/run=${key}`)).items;
      const running = pods.find((each) => each.status?.phase === 'Running');
      if (!running) return null;
      const log = await kubectl('-n', namespace, 'logs', running.metadata.name, '-c', 'script');
      return log.includes('one') && running;
    }, 120_000);
    // A graceful delete, as a drain or an eviction does it: SIGTERM, then the grace period.
    await kubectl('-n', namespace, 'delete', 'pod', pod.metadata.name, '--wait=false');

    const done = await eventually('the run Succeeded', async () => {
      const resource = await phaseOf('slow-1');
      if (resource.status?.phase === 'Failed') throw new Error(`the run failed: ${resource.status.message}\n${operatorLog}`);
      return resource.status?.phase === 'Succeeded' && resource;
    }, 120_000);
    expect(done.status?.passes).toBe(2);
    // Step a replays without printing again; step slow runs again; the script goes on to its end.
    expect(await eventually('pass 2 log', () => kubectl('-n', namespace, 'logs', `job/${key}-p2`, '-c', 'script'))).toBe('finished\n');
  });

  it('given runs sleeping, when the operator is killed and another one starts, then the new one picks them up and they finish on time', async () => {
    await givenRunOf('nap10', 'nap10.sh', 'spool sleep 10s\necho woke\n');
    await eventually('nap10 Waiting', async () => (await phaseOf('nap10-1')).status?.phase === 'Waiting', 120_000);
    const sleptAt = Date.now();
    operator?.kill('SIGKILL');
    await new Promise((resolve) => operator?.once('exit', resolve));
    await startOperatorProcess();

    const done = await eventually('nap10 Succeeded', async () => {
      const resource = await phaseOf('nap10-1');
      if (resource.status?.phase === 'Failed') throw new Error(`the run failed: ${resource.status.message}\n${operatorLog}`);
      return resource.status?.phase === 'Succeeded' && resource;
    }, 60_000);
    // On time: the 10 s sleep, plus a pod's start, not plus a lost lease's worth of waiting.
    expect(Date.now() - sleptAt).toBeLessThan(10_000 + 8_000);
    expect(done.status?.passes).toBe(2);
  });

  it('given a Handler, when the same event is delivered twice, then one Run starts, and its pod runs', async () => {
    // A person allowed to emit events in the namespace (config/rbac's hyperspool-edit), by token.
    await kubectl('apply', '-f', join(repo, 'config', 'rbac', 'user_roles.yaml'));
    await kubectl('-n', namespace, 'create', 'serviceaccount', 'emitter');
    await kubectl('-n', namespace, 'create', 'rolebinding', 'emitter', '--clusterrole', 'hyperspool-edit', `--serviceaccount=${namespace}:emitter`);
    const token = (await kubectl('-n', namespace, 'create', 'token', 'emitter')).trim();
    await apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'welcome', namespace }, spec: { filename: 'welcome.sh', script: 'spool step hi -- echo hi\n' } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Handler', metadata: { name: 'on-signup', namespace }, spec: { event: 'user.signed_up', workflowRef: { name: 'welcome' } } },
    );
    await eventually('the Handler Ready', async () => (await kubectl('-n', namespace, 'get', 'handler', 'on-signup', '-o', 'jsonpath={.status.conditions[0].status}')) === 'True');

    const emit = async (): Promise<string[]> => {
      const response = await fetch(`http://127.0.0.1:${operatorPort}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'user.signed_up', id: 'signup-42', project: namespace, payload: { user: 'ada' } }),
      });
      expect(response.ok).toBe(true);
      return ((await response.json()) as { runs: string[] }).runs;
    };
    const first = await emit();
    expect(first).toHaveLength(1);
    expect(await emit()).toEqual(first);
    const key = first[0]?.slice(first[0].lastIndexOf(':') + 1) ?? '';
    const runs = await eventually('its Run Succeeded', async () => {
      const list = await getJson<{ items: (RunResource & { spec: { workflowRef: { name: string } } })[] }>('-n', namespace, 'runs');
      const mine = list.items.filter((run) => run.spec.workflowRef.name === 'welcome');
      return mine.length === 1 && mine[0]?.metadata.labels?.['hyperspool.dev/run'] === key && mine[0].status?.phase === 'Succeeded' && mine;
    }, 120_000);
    expect(runs).toHaveLength(1);
  });

  it('given a Schedule every 3s of a run that takes 5s, then runs start on its ticks and a tick while one runs is skipped', async () => {
    await apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'tick', namespace }, spec: { filename: 'tick.sh', script: 'spool step work -- sleep 5\n' } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'every-3s', namespace }, spec: { every: '3s', workflowRef: { name: 'tick' } } },
    );
    type ScheduleResource = { status?: { skipped?: number; lastScheduleTime?: string; lastRunName?: string } };
    const schedule = await eventually('a skipped tick and a second run', async () => {
      const got = await getJson<ScheduleResource>('-n', namespace, 'schedule', 'every-3s');
      const list = await getJson<{ items: (RunResource & { spec: { workflowRef: { name: string } } })[] }>('-n', namespace, 'runs');
      const ticks = list.items.filter((run) => run.spec.workflowRef.name === 'tick');
      return (got.status?.skipped ?? 0) >= 1 && ticks.length >= 2 && { got, ticks };
    }, 60_000);
    expect(schedule.got.status?.lastScheduleTime).toBeDefined();
    await kubectl('-n', namespace, 'delete', 'schedule', 'every-3s');
  });

  it('given a Run waiting on a signal, when spool signal is run with a kubeconfig, then it wakes and finishes', async () => {
    // The operator runs on the host, not as a pod: a Service without a selector, and Endpoints to a
    // placeholder pod bound to no node that carries the host's address, let the API server's service
    // proxy reach it (the proxy only follows endpoints that are pods).
    await apply(
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hyperspool-operator', namespace: 'hyperspool-system' }, spec: { ports: [{ name: 'http', port: 7456, targetPort: operatorPort }] } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'operator-on-host', namespace: 'hyperspool-system' }, spec: { nodeName: 'the-host', containers: [{ name: 'operator', image: 'none' }] } },
    );
    await kubectl('-n', 'hyperspool-system', 'patch', 'pod', 'operator-on-host', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { podIP: HOST_IP, podIPs: [{ ip: HOST_IP }] } }));
    await apply({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'hyperspool-operator', namespace: 'hyperspool-system' },
      subsets: [{ addresses: [{ ip: HOST_IP, targetRef: { kind: 'Pod', name: 'operator-on-host', namespace: 'hyperspool-system' } }], ports: [{ name: 'http', port: operatorPort }] }],
    });

    // A person with edit in the namespace and the CLI's role, whose kubeconfig user is a token.
    await kubectl('apply', '-f', join(repo, 'config', 'rbac', 'user_roles.yaml'));
    await kubectl('-n', namespace, 'create', 'serviceaccount', 'signaller');
    await kubectl('-n', namespace, 'create', 'rolebinding', 'signaller', '--clusterrole', 'hyperspool-edit', `--serviceaccount=${namespace}:signaller`);
    await kubectl('-n', 'hyperspool-system', 'create', 'rolebinding', `${namespace}-signaller`, '--clusterrole', 'hyperspool-cli', `--serviceaccount=${namespace}:signaller`);
    const token = (await kubectl('-n', namespace, 'create', 'token', 'signaller')).trim();
    const admin = JSON.parse(await kubectl('config', 'view', '--raw', '-o', 'json')) as { clusters: { cluster: Record<string, string> }[] };
    const configDir = mkdtempSync(join(tmpdir(), 'hyperspool-e2e-'));
    const userConfig = join(configDir, 'signaller.kubeconfig');
    writeFileSync(
      userConfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'node', cluster: admin.clusters[0]?.cluster }],
        users: [{ name: 'signaller', user: { token } }],
        contexts: [{ name: 'signaller', context: { cluster: 'node', user: 'signaller', namespace } }],
        'current-context': 'signaller',
      }),
    );

    await givenRunOf('gate', 'gate.sh', 'echo "got $(spool wait signal go --timeout 1h)"\n');
    await eventually('gate Waiting', async () => (await phaseOf('gate-1')).status?.awaiting === 'signal go', 120_000);
    const said = await sh(process.execPath, [join(repo, 'bin', 'spool'), 'signal', 'gate-1', 'go', 'yes', '--kubeconfig', userConfig, '--context', 'signaller', '-n', namespace]);
    expect(said).toBe('signal go queued for gate-1\n');
    await eventually('gate Succeeded', async () => (await phaseOf('gate-1')).status?.phase === 'Succeeded', 120_000);
    const key = (await phaseOf('gate-1')).metadata.labels?.['hyperspool.dev/run'] ?? '';
    // The run ends when the script's end is reported; the kubelet's word on the pod may come later.
    expect(await eventually('pass 2 log', () => kubectl('-n', namespace, 'logs', `job/${key}-p2`, '-c', 'script'))).toBe('got yes\n');
    rmSync(configDir, { recursive: true, force: true });
  });
});
