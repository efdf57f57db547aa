import type { ArtifactsFlags } from '../../../src/store/artifacts/s3/location.js';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  KubeConfig,
  type V1Container,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node';
import { startOperator, type Operator } from '../../../src/operator/operator.js';
import type { WarmPodSettings } from '../../../src/operator/warm/warm-pools.js';
import type { Logger } from '../../../src/common/json-log.js';
import type { ChatSettings } from '../../../src/server/chat/settings.js';
import { startControlPlane, type ControlPlane } from '../../support/kube.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { BUILT_ACTIVITY_REPORTER, BUILT_NATIVE } from '../../../src/agent/script-client.js';
import { RUNNER_ACTIVITY_REPORTER, RUNNER_CLIENT } from '../../../src/operator/kube/pod-security.js';
import { SPOOL_BIN, processGroupOf, processesMentioning, startSpool, tempDir } from '../../support/spool.js';
import { eventually } from '../../support/eventually.js';
import { startInformer } from '../../../src/operator/kube/informer.js';

const execFileAsync = promisify(execFile);

export { eventually };
export { GaveUp, untilPhase } from '../../support/eventually.js';

/**
 * What a replica's `/readyz` answers on its probes port, as `<status> <text>` (`503 not ready:
 * waiting for the database`), or `no answer` before it serves: for a replica still starting, whose
 * `healthUrl` is not known yet.
 */
export async function readinessOn(metricsPort: number): Promise<string> {
  const answer = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => null);
  return answer ? `${answer.status} ${(await answer.text()).trim()}` : 'no answer';
}

const REPO = join(import.meta.dirname, '..', '..', '..');
export const TEST_LABEL = 'hyperspool.dev/test';

/**
 * A real kube-apiserver with the CRDs installed, a real PostgreSQL, and a namespace per test file.
 * Nothing runs pods here (no scheduler, no kubelet, no Job controller): tests play those parts
 * (`givenPodOf`, `whenJobFinishes`) where a pass needs them.
 */
export interface Cluster {
  plane: ControlPlane;
  postgres: TestPostgres;
  kubeConfig: KubeConfig;
  namespace: string;
  core: CoreV1Api;
  batch: BatchV1Api;
  custom: CustomObjectsApi;
  kubectl(...args: string[]): string;
  /**
   * Who the operator acts as, as config/ installs it: a token of the hyperspool-operator
   * ServiceAccount, bound by exactly config/rbac's roles (applied from its files), never admin.
   */
  operatorKubeconfigPath: string;
  operatorKubeConfig(): KubeConfig;
  /** An operator in this process; `kubeConfig` is who it acts as (the operator's ServiceAccount unless given). */
  startOperator(name: string, overrides?: OperatorOverrides): Promise<Operator>;
  /** startOperator, answered once it holds the lease: the tests' usual first step. */
  startLeader(name: string, overrides?: OperatorOverrides): Promise<Operator>;
  stop(): Promise<void>;
}

export interface OperatorOverrides {
  leaseDurationSeconds?: number;
  /** The probes-and-metrics port (a free one unless given). */
  metricsPort?: number;
  host?: string;
  kubeConfig?: KubeConfig;
  startTimeoutSeconds?: number;
  log?: Logger;
  databaseUrl?: string;
  runTtlSeconds?: number;
  chat?: ChatSettings;
  maxRunningPasses?: number;
  /** --artifacts and its S3 flags (keys from the test process's environment). */
  artifacts?: ArtifactsFlags;
  artifactSweepEveryMs?: number;
  /** How often the sweep reads every unfinished run (every minute unless given). */
  fullSweepEveryMs?: number;
  /** --shards (1 unless given). */
  shards?: number;
  /** --max-warm-pods and --warm-pod-ttl (the flags' defaults unless given). */
  warmPods?: WarmPodSettings;
}

export async function startCluster(namespace: string): Promise<Cluster> {
  const [plane, postgres] = await Promise.all([startControlPlane(), startPostgres()]);
  const kubeConfig = plane.kubeConfig();
  const kubectl = (...args: string[]): string =>
    execFileSync(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { encoding: 'utf8', cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  // Without blocking, so the CRDs and the operator's RBAC are applied at once.
  const kubectlAsync = async (...args: string[]): Promise<string> =>
    (await execFileAsync(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { encoding: 'utf8', cwd: REPO })).stdout;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const crdsServed = (async () => {
    await kubectlAsync('apply', '-f', 'crds/');
    await kubectlAsync('wait', '--for=condition=Established', '--timeout=60s', 'crd/runs.hyperspool.dev', 'crd/workflows.hyperspool.dev', 'crd/handlers.hyperspool.dev', 'crd/schedules.hyperspool.dev', 'crd/activityclasses.hyperspool.dev');
    // Established comes a moment before the resources' storage answers lists.
    await eventually('the CRDs to be served', async () => {
      for (const plural of ['workflows', 'runs', 'handlers', 'schedules', 'activityclasses']) await custom.listClusterCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', plural });
      return true;
    });
  })();
  // Handled at once, so a failure while the identity is being made is not an unhandled rejection.
  crdsServed.catch(() => undefined);
  await Promise.all(
    [namespace, 'hyperspool-system'].map((name) => core.createNamespace({ body: { metadata: { name, labels: { [TEST_LABEL]: 'true' } } } })),
  );
  // No controller-manager makes the default ServiceAccount; the pass pods use it.
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
  const operatorKubeconfigPath = await givenOperatorIdentity(plane, kubectlAsync, core);
  await crdsServed;
  const operatorKubeConfig = (): KubeConfig => {
    const config = new KubeConfig();
    config.loadFromFile(operatorKubeconfigPath);
    return config;
  };
  const operators: Operator[] = [];
  const cluster: Cluster = {
    plane,
    postgres,
    kubeConfig,
    namespace,
    core,
    batch: kubeConfig.makeApiClient(BatchV1Api),
    custom,
    kubectl,
    operatorKubeconfigPath,
    operatorKubeConfig,
    async startOperator(name, overrides = {}) {
      const operator = await startOperator({
        kubeConfig: overrides.kubeConfig ?? operatorKubeConfig(),
        databaseUrl: overrides.databaseUrl ?? postgres.url,
        namespace: 'hyperspool-system',
        name,
        port: 0,
        metricsPort: overrides.metricsPort ?? 0,
        aggregatedPort: 0,
        host: overrides.host ?? '127.0.0.1',
        jobs: { runnerImage: 'hyperspool/runner:dev', serverUrl: 'http://hyperspool-operator.hyperspool-system.svc:7456', ttlSecondsAfterFinished: 600, ...(overrides.startTimeoutSeconds ? { startTimeoutSeconds: overrides.startTimeoutSeconds } : {}) },
        // 15 s: a loaded machine (two vitest workers, pods as processes) must not lose the lease
        // mid-test; tests of a handover set a shorter one or wait for it.
        leaseDurationSeconds: overrides.leaseDurationSeconds ?? 15,
        sweepMs: 200,
        ...(overrides.log ? { log: overrides.log } : {}),
        ...(overrides.chat ? { chat: overrides.chat } : {}),
        ...(overrides.maxRunningPasses ? { maxRunningPasses: overrides.maxRunningPasses } : {}),
        ...(overrides.runTtlSeconds !== undefined ? { runTtlSeconds: overrides.runTtlSeconds } : {}),
        ...(overrides.artifacts ? { artifacts: overrides.artifacts } : {}),
        ...(overrides.artifactSweepEveryMs ? { artifactSweepEveryMs: overrides.artifactSweepEveryMs } : {}),
        ...(overrides.fullSweepEveryMs ? { fullSweepEveryMs: overrides.fullSweepEveryMs } : {}),
        ...(overrides.shards ? { shards: overrides.shards } : {}),
        ...(overrides.warmPods ? { warmPods: overrides.warmPods } : {}),
      });
      operators.push(operator);
      return operator;
    },
    async startLeader(name, overrides = {}) {
      const operator = await cluster.startOperator(name, overrides);
      await eventually(`${name} to lead`, () => Promise.resolve(operator.isLeader()));
      return operator;
    },
    async stop() {
      for (const operator of operators) await operator.kill().catch(() => undefined);
      await Promise.all([plane.stop(), postgres.stop()]);
    },
  };
  return cluster;
}

/**
 * config/rbac applied as it is (the operator's ServiceAccount, its ClusterRole and leader-election
 * Role and their bindings, the users' roles), and a kubeconfig whose user is a token of that
 * ServiceAccount (a TokenRequest, as the kubelet projects into the operator's pod): the path.
 */
async function givenOperatorIdentity(plane: ControlPlane, kubectl: (...args: string[]) => Promise<string>, core: CoreV1Api): Promise<string> {
  await kubectl('apply', '--server-side', '-k', 'config/rbac');
  const request = await core.createNamespacedServiceAccountToken({
    namespace: 'hyperspool-system',
    name: 'hyperspool-operator',
    // Longer than any test file runs.
    body: { spec: { audiences: [], expirationSeconds: 6 * 3600 } },
  });
  const server = plane.kubeConfig().getCurrentCluster();
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server: server?.server ?? '', caData: server?.caData, caFile: server?.caFile, skipTLSVerify: false }],
    users: [{ name: 'hyperspool-operator', token: request.status?.token ?? '' }],
    contexts: [{ name: 'operator', cluster: 'test', user: 'hyperspool-operator', namespace: 'hyperspool-system' }],
    currentContext: 'operator',
  });
  const path = join(dirname(plane.kubeconfigPath), 'operator.kubeconfig');
  writeFileSync(path, config.exportConfig());
  return path;
}

/** Given: a Workflow of one script (its text, or the ConfigMap key holding it), in the cluster's namespace. */
export async function givenWorkflow(
  cluster: Cluster,
  name: string,
  filename: string,
  script: string | { configMapKeyRef: { name: string; key: string } },
  env?: { name: string; value: string }[],
  image?: string,
): Promise<void> {
  await cluster.custom.createNamespacedCustomObject({
    group: 'hyperspool.dev',
    version: 'v1alpha1',
    namespace: cluster.namespace,
    plural: 'workflows',
    body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, labels: { [TEST_LABEL]: 'true' } }, spec: { filename, ...(typeof script === 'string' ? { script } : { scriptFrom: script }), ...(env ? { env } : {}), ...(image ? { image } : {}) } },
  });
}

export interface RunResource {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  status?: { runId?: string; phase?: string; awaiting?: string; passes?: number; message?: string; startedAt?: string; finishedAt?: string; duration?: string; conditions?: { type: string; status: string; reason: string }[] };
}

/** The name of every Job ever created in the namespace, deleted ones too, in order: a pass started twice is a name seen twice. */
export async function watchJobsCreated(cluster: Cluster): Promise<{ names: string[]; stop(): Promise<void> }> {
  const names: string[] = [];
  const watch = startInformer<V1Job>({
    kubeConfig: cluster.kubeConfig,
    path: `/apis/batch/v1/namespaces/${cluster.namespace}/jobs`,
    list: (query) => cluster.batch.listNamespacedJob({ namespace: cluster.namespace, ...query }),
    onAdd: (job) => names.push(job.metadata?.name ?? ''),
  });
  await watch.waitForSync();
  return { names, stop: () => watch.stop() };
}

/** When: a Run of that Workflow is created. */
export async function whenRunCreated(cluster: Cluster, name: string, workflow: string): Promise<RunResource> {
  return (await cluster.custom.createNamespacedCustomObject({
    group: 'hyperspool.dev',
    version: 'v1alpha1',
    namespace: cluster.namespace,
    plural: 'runs',
    body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name, labels: { [TEST_LABEL]: 'true' } }, spec: { workflowRef: { name: workflow } } },
  })) as RunResource;
}

export async function getRun(cluster: Cluster, name: string): Promise<RunResource> {
  return (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'runs', name })) as RunResource;
}

export async function jobsOf(cluster: Cluster, runKey: string): Promise<V1Job[]> {
  return (await cluster.batch.listNamespacedJob({ namespace: cluster.namespace, labelSelector: `hyperspool.dev/run=${runKey}` })).items;
}

/**
 * Plays the Job controller: makes the pod of a pass's Job from its template, and asks for the
 * token the kubelet would project into it (bound to the pod, audience hyperspool).
 */
export async function givenPodOf(cluster: Cluster, job: V1Job): Promise<{ pod: V1Pod; token: string }> {
  const template = job.spec?.template;
  const pod = await cluster.core.createNamespacedPod({
    namespace: cluster.namespace,
    body: {
      metadata: {
        name: `${job.metadata?.name ?? ''}-pod`,
        labels: template?.metadata?.labels ?? {},
        ...(template?.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata?.name ?? '', uid: job.metadata?.uid ?? '', controller: true }],
      },
      spec: template?.spec ?? { containers: [] },
    },
  });
  const request = await cluster.core.createNamespacedServiceAccountToken({
    namespace: cluster.namespace,
    name: pod.spec?.serviceAccountName ?? 'default',
    body: {
      spec: {
        audiences: ['hyperspool'],
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
      },
    },
  });
  return { pod, token: request.status?.token ?? '' };
}

/** Plays the Job controller once the pod has ended: the Job's status says Complete. */
export function whenJobFinishes(cluster: Cluster, job: V1Job): Promise<void> {
  return whenJobEnds(cluster, job, 'Complete');
}

/** Plays the Job controller once the pod has ended: the Job's status says Complete or Failed. */
export async function whenJobEnds(cluster: Cluster, job: V1Job, how: 'Complete' | 'Failed'): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const criteria = how === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget';
  // The operator deletes a suspended pass's Job itself: then there is nothing left to mark.
  const gone = (error: unknown): void => {
    if ((error as { code?: number }).code !== 404) throw error;
  };
  await cluster.batch.patchNamespacedJobStatus(
    {
      namespace: cluster.namespace,
      name: job.metadata?.name ?? '',
      body: {
        status: {
          startTime: now,
          ...(how === 'Complete' ? { completionTime: now, succeeded: 1 } : { failed: 1 }),
          conditions: [
            { type: criteria, status: 'True', lastTransitionTime: now, lastProbeTime: now, ...(how === 'Failed' ? { reason: 'BackoffLimitExceeded' } : {}) },
            { type: how, status: 'True', lastTransitionTime: now, lastProbeTime: now, ...(how === 'Failed' ? { reason: 'BackoffLimitExceeded' } : {}) },
          ],
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  ).catch(gone);
}

/** The agent's side of the API, as the agent in a pass's pod speaks it. */
export function agentOf(operatorUrl: string, runId: string, pass: number, token: string | null) {
  const base = `${operatorUrl}/v1/agent/runs/${encodeURIComponent(runId)}/passes/${pass}`;
  const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    spec: () => send('GET', ''),
    call: (request: Record<string, unknown>) => send('POST', '/calls', request),
    exit: (code: number | null, signal: string | null = null) => send('POST', '/exit', { code, signal }),
  };
}

/** This machine's first non-loopback IPv4 address: the API server's service proxy refuses loopback. */
function hostAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  throw new Error('this machine has no non-loopback IPv4 address for the service proxy to reach the operator');
}

/**
 * Plays the kubelet and the endpoints controller for an operator running in this process: its
 * Service (as config/manager has it), a pod whose IP is this machine's, and the Endpoints that the
 * API server's service proxy (and its aggregator, for api.hyperspool.dev) follows to the operator's ports. Start the operator with
 * `host: hostAddressForProxy()` so it listens there.
 */
export async function exposeOperator(cluster: Cluster, operator: Operator): Promise<void> {
  const namespace = 'hyperspool-system';
  const ip = hostAddress();
  const port = Number(new URL(operator.url).port);
  const https = Number(operator.listening.aggregated.split(':').pop());
  const labels = { 'app.kubernetes.io/name': 'hyperspool', 'app.kubernetes.io/component': 'operator' };
  await cluster.core.createNamespacedService({
    namespace,
    body: { metadata: { name: 'hyperspool-operator', labels }, spec: { selector: labels, ports: [{ name: 'http', port: 7456, targetPort: port }, { name: 'https', port: 443, targetPort: https }] } },
  });
  const pod = await cluster.core.createNamespacedPod({
    namespace,
    body: { metadata: { name: 'hyperspool-operator-0', labels }, spec: { serviceAccountName: 'default', containers: [{ name: 'operator', image: 'hyperspool/operator:dev' }] } },
  }).catch(async () => cluster.core.readNamespacedPod({ namespace, name: 'hyperspool-operator-0' }));
  await cluster.core.patchNamespacedPodStatus(
    { namespace, name: pod.metadata?.name ?? '', body: { status: { podIP: ip, podIPs: [{ ip }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await cluster.core.createNamespacedEndpoints({
    namespace,
    body: {
      metadata: { name: 'hyperspool-operator', labels },
      subsets: [{ addresses: [{ ip, targetRef: { kind: 'Pod', name: pod.metadata?.name ?? '', namespace } }], ports: [{ name: 'http', port }, { name: 'https', port: https }] }],
    },
  });
  // The aggregator (api.hyperspool.dev) reads EndpointSlices, which no controller mirrors here.
  await cluster.kubeConfig.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace,
    body: {
      metadata: { name: 'hyperspool-operator-0', labels: { ...labels, 'kubernetes.io/service-name': 'hyperspool-operator' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [ip], conditions: { ready: true }, targetRef: { kind: 'Pod', name: pod.metadata?.name ?? '', namespace } }],
      ports: [
        { name: 'http', port, protocol: 'TCP' },
        { name: 'https', port: https, protocol: 'TCP' },
      ],
    },
  });
}

export function hostAddressForProxy(): string {
  return hostAddress();
}

/**
 * A person on the cluster: a ServiceAccount bound to one of config/rbac's user roles in the
 * namespace, and to hyperspool-cli in hyperspool-system (the service proxy to the operator), with a
 * kubeconfig whose user is a token of it (as a cloud provider's exec plugin would give).
 */
export async function givenUser(cluster: Cluster, name: string, clusterRole: string, dir: string): Promise<string> {
  const { namespace } = cluster;
  const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await cluster.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  for (const [where, role] of [[namespace, clusterRole], ['hyperspool-system', 'hyperspool-cli']] as const) {
    await rbac.createNamespacedRoleBinding({
      namespace: where,
      body: { metadata: { name: `${namespace}-${name}-${role}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects },
    });
  }
  const token = await cluster.core.createNamespacedServiceAccountToken({ namespace, name, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const admin = cluster.kubeConfig;
  const server = admin.getCurrentCluster();
  const path = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: server?.server, 'certificate-authority': server?.caFile, 'certificate-authority-data': server?.caData } }],
      users: [{ name, user: { token: token.status?.token } }],
      contexts: [{ name, context: { cluster: 'test', user: name, namespace } }],
      'current-context': name,
    }),
  );
  return path;
}

/** A pass's pod whose containers run as processes here (see startPod). */
export interface RunningPod {
  /** Settles when the script container exits (the sidecar is stopped then, and the Job marked). */
  done: Promise<{ code: number | null; output: string }>;
  /** The node dies: every process of the pod gets SIGKILL, and the Job says Failed. */
  kill(): Promise<void>;
  /** The pod is deleted or evicted: the script container's main process gets SIGTERM, as the kubelet sends it. */
  terminate(): void;
  /** Which of its containers still runs, or `ended`: said when a pod outlives its test. */
  state(): string;
}

/**
 * Plays the kubelet for a pass's pod: its two containers (`spool agent`, the native sidecar, and
 * `spool pass`, the script container) run as real processes here, with the Job template's commands
 * and environment, the pod's emptyDir as a temp directory and its projected token as a file. The
 * agent reaches the operator at `operatorUrl` (the Service's DNS name means nothing here). Ends as
 * the kubelet does: the sidecar is stopped once the script container has exited, and the Job's
 * status says how the pod ended.
 */
export async function startPod(
  cluster: Cluster,
  operatorUrl: string,
  job: V1Job,
  /** Start the agent sidecar this long after the script container (a kubelet promises no order between them). */
  { agentDelayMs = 0 } = {},
): Promise<RunningPod> {
  const { token } = await givenPodOf(cluster, job);
  const pod = job.spec?.template.spec;
  const agent = pod?.initContainers?.[0];
  const script = pod?.containers[0];
  const root = tempDir('spool-pod-');
  writeFileSync(join(root, 'token'), token);
  const local = (arg: string): string => arg.replace(/^\/spool\b/, root);
  const env = (container: V1Container | undefined): Record<string, string> =>
    Object.fromEntries((container?.env ?? []).map((variable) => [variable.name, local(variable.value ?? '')]));
  const path = `${dirname(SPOOL_BIN)}:${process.env.PATH ?? ''}`;
  // The script container runs the native client that the agent's postStart hook copies into the
  // pod (from the runner image; here, the one built in dist/), with the image's own PATH.
  const copied = agent?.lifecycle?.postStart?.exec?.command?.join(' ');
  if (copied !== `cp ${RUNNER_CLIENT} /spool/bin/spool` || script?.command?.[0] !== '/spool/bin/spool') {
    throw new Error(`the pass's pod does not run the native client it copies: ${copied ?? 'no postStart'}; ${script?.command?.join(' ') ?? ''}`);
  }
  const main = startSpool((script?.command ?? []).slice(1).map(local), { cwd: root, program: BUILT_NATIVE, env: { ...env(script), PATH: process.env.PATH ?? '' } });
  if (agentDelayMs) await new Promise((resolve) => setTimeout(resolve, agentDelayMs));
  const sidecar = startSpool((agent?.command ?? []).slice(1).map(local), {
    cwd: root,
    env: { ...env(agent), SPOOL_SERVER: operatorUrl, SPOOL_TOKEN_FILE: join(root, 'token'), PATH: path },
  });
  let killed = false;
  let state = 'the script container runs';
  const done = main.done.then(async ({ code, output }) => {
    state = `the script container exited (${code ?? 'signal'}) and its sidecar was sent SIGTERM, but runs on`;
    try {
      process.kill(sidecar.pid, 'SIGTERM');
    } catch {
      // killed with the pod already
    }
    await sidecar.done;
    state = 'ended';
    if (!killed) await whenJobEnds(cluster, job, code === 0 ? 'Complete' : 'Failed');
    return { code, output };
  });
  return {
    done,
    state: () => state,
    terminate: () => process.kill(main.pid, 'SIGTERM'),
    async kill() {
      killed = true;
      // The script runs in a process group of its own; its command line names the pod's directory.
      const ours = processGroupOf(process.pid);
      const groups = new Set([main.pid, sidecar.pid, ...processesMentioning(root).map((pid) => processGroupOf(pid) ?? pid)]);
      groups.delete(ours ?? -1);
      for (const group of groups) {
        for (const target of [-group, group]) {
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            // not a group, or gone
          }
        }
      }
      await done;
      await whenJobEnds(cluster, job, 'Failed');
    },
  };
}

/** An activity attempt's pod whose command runs as a process here (see startActivityPod). */
export interface RunningAttempt {
  /** Settles when `spool-activity-attempt` exits (the Job is marked then, as the Job controller would). */
  done: Promise<{ code: number | null; output: string }>;
  /** The pod is deleted mid-attempt: its process is killed, the pod goes, and the Job says Failed. */
  deletePod(): Promise<void>;
}

/**
 * Plays the kubelet for an activity attempt's pod: its init container's copy of the reporter is
 * the one built in dist/, and the command (`spool-activity-attempt -- ...`) runs as a process
 * here with the Job's environment and the pod's projected token, reporting to `operatorUrl`.
 */
export async function startActivityPod(cluster: Cluster, operatorUrl: string, job: V1Job): Promise<RunningAttempt> {
  const { pod, token } = await givenPodOf(cluster, job);
  const spec = job.spec?.template.spec;
  const container = spec?.containers[0];
  const copied = spec?.initContainers?.[0]?.command?.join(' ');
  if (copied !== `cp ${RUNNER_ACTIVITY_REPORTER} /spool/bin/spool-activity-attempt` || container?.command?.[0] !== '/spool/bin/spool-activity-attempt') {
    throw new Error(`the attempt's pod does not run the reporter it copies: ${copied ?? 'no init container'}; ${container?.command?.join(' ') ?? ''}`);
  }
  const root = tempDir('spool-attempt-');
  writeFileSync(join(root, 'token'), token);
  const env = Object.fromEntries((container.env ?? []).map((variable) => [variable.name, variable.value ?? '']));
  // The Service's DNS name means nothing here: the report goes to the operator in this process.
  env.SPOOL_ACTIVITY_REPORT = (env.SPOOL_ACTIVITY_REPORT ?? '').replace(/^https?:\/\/[^/]+/, operatorUrl);
  env.SPOOL_TOKEN_FILE = join(root, 'token');
  const main = startSpool((container.command ?? []).slice(1), { cwd: root, program: BUILT_ACTIVITY_REPORTER, env: { ...env, PATH: process.env.PATH ?? '' } });
  let deleted = false;
  const done = main.done.then(async ({ code, output }) => {
    if (!deleted) await whenJobEnds(cluster, job, code === 0 ? 'Complete' : 'Failed');
    return { code, output };
  });
  return {
    done,
    async deletePod() {
      deleted = true;
      const ours = processGroupOf(process.pid);
      for (const pid of [main.pid, ...processesMentioning(root)]) {
        if (pid === ours) continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await done;
      await cluster.core.deleteNamespacedPod({ namespace: cluster.namespace, name: pod.metadata?.name ?? '' });
      await whenJobEnds(cluster, job, 'Failed');
    },
  };
}

/** A pass's pod run to its end (see startPod): the script container's exit code and output. */
export async function whenPodRuns(cluster: Cluster, operatorUrl: string, job: V1Job): Promise<{ code: number | null; output: string }> {
  return (await startPod(cluster, operatorUrl, job)).done;
}

/**
 * Plays the Job controller and kubelet for every pass Job that appears in the namespace: each new
 * Job's pod runs (see startPod) as soon as it is seen. For runs of many passes (pipelines, whose
 * jobs are child runs of their own).
 */
export function startKubelet(cluster: Cluster, operatorUrl: string): { stop(): Promise<void> } {
  const seen = new Set<string>();
  const pods: { job: string; started: Promise<RunningPod | RunningAttempt | null>; ended: Promise<unknown> }[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const jobs = await cluster.batch.listNamespacedJob({ namespace: cluster.namespace }).catch(() => ({ items: [] as V1Job[] }));
      for (const job of jobs.items) {
        const name = job.metadata?.name ?? '';
        if (seen.has(name) || job.status?.conditions?.length) continue;
        seen.add(name);
        const started = (job.metadata?.labels?.['hyperspool.dev/activity'] ? startActivityPod(cluster, operatorUrl, job) : startPod(cluster, operatorUrl, job)).catch(() => null);
        pods.push({ job: name, started, ended: started.then((pod) => pod?.done).catch(() => undefined) });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    /**
     * As a kubelet shutting down: pods get a grace period to end, then are killed. One still
     * running then is named (with which container runs) instead of holding the test's teardown up.
     */
    async stop() {
      stopped = true;
      await loop;
      const left = await stillRunningAfter(POD_GRACE_MS, pods);
      for (const { job, started } of left) {
        const pod = await started;
        if (!pod) continue;
        console.warn(`kubelet: the pod of Job ${job} still ran ${POD_GRACE_MS / 1000} s after its test ended (${'state' in pod ? pod.state() : 'an activity attempt runs'}); killing it`);
        await ('kill' in pod ? pod.kill() : pod.deletePod());
      }
    },
  };
}

/** How long startKubelet's stop() lets pods end by themselves, as a pod's terminationGracePeriodSeconds. */
const POD_GRACE_MS = 30_000;

/** Those of `pods` that have not ended within `ms`. */
async function stillRunningAfter<T extends { ended: Promise<unknown> }>(ms: number, pods: T[]): Promise<T[]> {
  const ended = new Set<T>();
  for (const pod of pods) void pod.ended.then(() => ended.add(pod));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(pods.map((pod) => pod.ended)), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  return pods.filter((pod) => !ended.has(pod));
}
