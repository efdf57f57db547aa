// The cluster the e2e suite runs on, and Hyperspool installed on it from config/quickstart (test/e2e/deploy).
//
// Which cluster: the one HYPERSPOOL_E2E_KUBECONFIG names (kind, with hack/kind.sh), or else the
// local node of hack/local-cluster.sh, brought up here (needs root) and taken down again afterwards
// unless it was already up or HYPERSPOOL_E2E_KEEP=1 (once per run, by support/global-setup.ts). Not KUBECONFIG: the suite installs a test
// operator and database, which must never land on a cluster that merely happens to be current. Images: built from this checkout with hack/images.sh
// and imported into the local node, unless HYPERSPOOL_E2E_IMAGES=preloaded (kind.sh loads them).
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { eventually as pollUntil } from '../../support/eventually.js';
export { GaveUp } from '../../support/eventually.js';
import { untilPhase as untilPhaseEvery } from '../../support/eventually.js';

const run = promisify(execFile);
export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const clusterScript = join(repo, 'hack', 'local-cluster.sh');
export const SYSTEM = 'hyperspool-system';
/** The label on everything a test run creates, so it can be found and removed. */
export const E2E_LABEL = 'hyperspool.dev/e2e';
/** The operator replicas' pods. */
export const OPERATOR_PODS = 'app.kubernetes.io/component=operator';

export async function sh(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    return (await run(file, args, { encoding: 'utf8', maxBuffer: 64 << 20, env })).stdout;
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string; message?: string };
    throw new Error([failed.message, failed.stdout, failed.stderr].filter(Boolean).join('\n'));
  }
}

/** Polls as test/support/eventually.ts does, less often (each probe runs kubectl) and longer by default (pods start). */
export const eventually = <T>(what: string, probe: () => Promise<T | false | 0 | '' | null | undefined>, timeoutMs = 60_000): Promise<T> =>
  pollUntil(what, probe, timeoutMs, 250);

/** Waits for a resource's phase as test/support/eventually.ts's untilPhase does, failing at once on another final one; as often as eventually. */
export const untilPhase = <T extends { status?: { phase?: string; message?: string } }>(
  what: string,
  read: () => Promise<T>,
  phase: string,
  timeoutMs = 60_000,
  explain?: (resource: T) => Promise<string>,
): Promise<T> => untilPhaseEvery(what, read, phase, timeoutMs, { everyMs: 250, ...(explain ? { explain } : {}) });

/** An object to apply: any manifest, whose labels the suite adds to. */
export type KubeObject = { metadata?: { labels?: Record<string, string> } & Record<string, unknown> } & Record<string, unknown>;

export interface Cluster {
  kubeconfig: string;
  kubectl(...args: string[]): Promise<string>;
  getJson<T>(...args: string[]): Promise<T>;
  /** `kubectl apply` of these objects, each labelled as this run's. */
  apply(...items: KubeObject[]): Promise<void>;
  /** The same, as the person whose kubeconfig this is (givenPerson's), not the cluster's admin. */
  applyAs(kubeconfig: string, ...items: KubeObject[]): Promise<void>;
  /** The operator replicas' recent logs, for a failure's message. */
  operatorLogs(): Promise<string>;
  /** Why a Run took more passes than it should (its PassLost Events), for a failure's message. */
  lostPasses(namespace: string, run: string): Promise<string>;
  /**
   * A person: a ServiceAccount in the namespace bound to this ClusterRole there (config/rbac's
   * user roles) and to hyperspool-cli, and the path of a kubeconfig whose user is its token, as the
   * spool CLI needs (it passes the token on to the operator).
   */
  givenPerson(namespace: string, name: string, role: 'hyperspool-edit' | 'hyperspool-view'): Promise<string>;
  /**
   * A person as kubeadm, kind and minikube users are: User `name`, with a client certificate the
   * cluster's signer issued through a CertificateSigningRequest (kubernetes.io/kube-apiserver-client),
   * bound to this ClusterRole in the namespace and to hyperspool-cli, never cluster-admin.
   */
  givenCertificatePerson(namespace: string, name: string, role: 'hyperspool-edit' | 'hyperspool-view'): Promise<string>;
  close(): Promise<void>;
}

/**
 * The cluster of this run: HYPERSPOOL_E2E_KUBECONFIG's, or the local node, brought up if it is not
 * (`ours`: taken down again at the end, unless HYPERSPOOL_E2E_KEEP=1). Called once, by the suite's
 * global setup.
 */
export async function bringUpCluster(): Promise<{ kubeconfig: string; ours: boolean }> {
  const given = process.env.HYPERSPOOL_E2E_KUBECONFIG;
  if (given) return { kubeconfig: given, ours: false };
  if (process.getuid?.() !== 0)
    throw new Error('the e2e suite on the local node needs root (hack/local-cluster.sh makes a network namespace and cgroups); or set HYPERSPOOL_E2E_KUBECONFIG');
  const wasUp = await sh('bash', [clusterScript, 'status']).then(
    () => true,
    () => false,
  );
  const kubeconfig = /export KUBECONFIG=(\S+)/.exec(await sh('bash', [clusterScript, 'up']))?.[1] ?? '';
  if (!kubeconfig) throw new Error('hack/local-cluster.sh up printed no KUBECONFIG');
  return { kubeconfig, ours: !wasUp && !process.env.HYPERSPOOL_E2E_KEEP };
}

export const takeDownCluster = (): Promise<string> => sh('bash', [clusterScript, 'down']);

/** The images the suite's pods run (hack/images.sh). */
const IMAGES = ['runner', 'operator', 'postgres', 'plain', 's3'];

/** dist/ as it is now, and the images holding it, built but not imported: the node may not be up yet. */
export async function buildImages(): Promise<void> {
  await sh('npm', ['run', '--silent', '--prefix', repo, 'build']);
  await sh('bash', [join(repo, 'hack', 'images.sh'), '--no-import', ...IMAGES]);
}

/** The images buildImages built, imported into the local node. */
export const importImages = (): Promise<string> => sh('bash', [join(repo, 'hack', 'images.sh'), '--import-only', ...IMAGES]);

/** The cluster the global setup brought up or found, for one test file. */
export async function openCluster(runLabel: string): Promise<Cluster> {
  const kubeconfig = inject('e2eKubeconfig');
  const kubectlBin =
    process.env.KUBECTL ?? join((await sh('bash', [join(repo, 'hack', 'build-k8s.sh'), 'kubectl'])).trim().split('\n').pop() ?? '', 'kubectl');

  const kubectlAs = (config: string, ...args: string[]): Promise<string> => sh(kubectlBin, ['--kubeconfig', config, ...args]);
  const kubectl = (...args: string[]): Promise<string> => kubectlAs(kubeconfig, ...args);
  const applyAs = async (config: string, ...items: KubeObject[]): Promise<void> => {
    for (const item of items) item.metadata = { ...item.metadata, labels: { ...item.metadata?.labels, [E2E_LABEL]: runLabel } };
    await withFile('objects.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), (path) => kubectlAs(config, 'apply', '-f', path));
  };
  const apply = (...items: KubeObject[]): Promise<void> => applyAs(kubeconfig, ...items);
  const people = mkdtempSync(join(tmpdir(), 'hyperspool-e2e-people-'));
  /** Binds a person to `role` in the namespace and to hyperspool-cli in hyperspool-system (with `objects`, such as their ServiceAccount). */
  const bindPerson = (namespace: string, role: string, subject: Record<string, string>, ...objects: KubeObject[]): Promise<void> => {
    const roleRef = (clusterRole: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole });
    const subjects = [subject];
    return apply(
      ...objects,
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: subject.name, namespace }, roleRef: roleRef(role), subjects },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `${namespace}-${subject.name}`, namespace: SYSTEM }, roleRef: roleRef('hyperspool-cli'), subjects },
    );
  };
  /** A kubeconfig of the cluster's server and CA whose user is `user` (a token, or a certificate and key). */
  const personKubeconfig = async (namespace: string, name: string, user: Record<string, string>): Promise<string> => {
    const admin = JSON.parse(await kubectl('config', 'view', '--raw', '--minify', '-o', 'json')) as { clusters: { cluster: Record<string, string> }[] };
    const file = join(people, `${namespace}-${name}.kubeconfig`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'e2e', cluster: admin.clusters[0]?.cluster }],
        users: [{ name, user }],
        contexts: [{ name, context: { cluster: 'e2e', user: name, namespace } }],
        'current-context': name,
      }),
    );
    return file;
  };
  return {
    kubeconfig,
    kubectl,
    apply,
    applyAs,
    givenPerson: async (namespace, name, role) => {
      await bindPerson(namespace, role, { kind: 'ServiceAccount', name, namespace }, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
      const token = (await kubectl('-n', namespace, 'create', 'token', name, '--duration=2h')).trim();
      return personKubeconfig(namespace, name, { token });
    },
    givenCertificatePerson: async (namespace, name, role) => {
      const key = join(people, `${namespace}-${name}.key`);
      const csr = join(people, `${namespace}-${name}.csr`);
      await sh('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
      await sh('openssl', ['req', '-new', '-key', key, '-subj', `/CN=${name}`, '-out', csr]);
      const request = `${namespace}-${name}`;
      await apply({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: request },
        spec: { request: readFileSync(csr).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], expirationSeconds: 7200 },
      });
      await kubectl('certificate', 'approve', request);
      const certificate = await eventually('the signed certificate', async () => (await kubectl('get', 'csr', request, '-o', 'jsonpath={.status.certificate}')).trim());
      await bindPerson(namespace, role, { kind: 'User', name, apiGroup: 'rbac.authorization.k8s.io' });
      return personKubeconfig(namespace, name, { 'client-certificate-data': certificate, 'client-key-data': readFileSync(key).toString('base64') });
    },
    getJson: async <T>(...args: string[]) => JSON.parse(await kubectl('get', '-o', 'json', ...args)) as T,
    operatorLogs: () =>
      kubectl('-n', SYSTEM, 'logs', '-l', OPERATOR_PODS, '--prefix', '--tail=100').catch((error: Error) => error.message),
    lostPasses: async (namespace, run) => {
      type Events = { items: { reason?: string; message?: string }[] };
      const events = await kubectl('-n', namespace, 'get', 'events', '-o', 'json', '--field-selector', `involvedObject.name=${run}`).catch(() => '{"items":[]}');
      const lost = (JSON.parse(events) as Events).items.filter((event) => event.reason === 'PassLost').map((event) => event.message);
      return lost.length > 0 ? `${run}: ${lost.join('; ')}` : `${run}: no PassLost Event`;
    },
    close: () => {
      rmSync(people, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/** `use` of a temporary file holding `text`, removed afterwards (kubectl apply -f reads files). */
async function withFile<T>(name: string, text: string, use: (path: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'hyperspool-e2e-'));
  try {
    writeFileSync(join(dir, name), text);
    return await use(join(dir, name));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Installs Hyperspool as users do (`kubectl apply -k`, config/quickstart through test/e2e/deploy)
 * with the images of this checkout, and waits for PostgreSQL and both operator replicas to be ready.
 */
export async function deployHyperspool(cluster: Cluster): Promise<void> {
  // The global setup built the images of this checkout (unless they were preloaded).
  const build = inject('e2eBuild');
  await givenVolumeForTheDatabase(cluster);
  let manifests = await cluster.kubectl('kustomize', join(repo, 'test', 'e2e', 'deploy'));
  const postgresImage = process.env.HYPERSPOOL_E2E_POSTGRES_IMAGE;
  if (postgresImage) manifests = manifests.replace('image: hyperspool/postgres:dev', `image: ${postgresImage}`);
  await withFile('install.yaml', manifests, (path) => cluster.kubectl('apply', '--server-side', '--force-conflicts', '-f', path));
  // Replicas left from an earlier run still run the image that had this tag then: the pod template
  // names the build, so the first file of a run replaces them and the next files change nothing
  // (a rollout per file cost each half a minute).
  if (build) {
    const template = { spec: { template: { metadata: { annotations: { 'hyperspool.dev/e2e-build': build } } } } };
    await cluster.kubectl('-n', SYSTEM, 'patch', 'deployment/hyperspool-operator', '--type=merge', '-p', JSON.stringify(template));
  }
  await cluster.kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-postgres', '--timeout=180s');
  // The artifacts' bucket (test/e2e/deploy/s3.yaml): an operator checks it when it starts.
  await cluster.kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-s3', '--timeout=120s');
  await operatorRolledOut(cluster);
}

export interface OperatorPod {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { containers: { image: string }[] };
  status?: { containerStatuses?: { ready: boolean; restartCount?: number }[] };
}

/**
 * Waits for the operator Deployment's rollout and then for the replicas it replaced to be gone, and
 * answers the pods (all ready, none leaving; each of `image` when given). `kubectl rollout status`
 * returns while a replaced pod still terminates, and one that led could start a pass of a Run
 * created then, which its release a moment later loses: the run would take a pass more than it
 * should.
 */
export async function operatorRolledOut(cluster: Cluster, image?: string): Promise<OperatorPod[]> {
  await cluster.kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-operator', '--timeout=240s').catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await cluster.operatorLogs()}`);
  });
  const replicas = Number(await cluster.kubectl('-n', SYSTEM, 'get', 'deployment/hyperspool-operator', '-o', 'jsonpath={.spec.replicas}'));
  const pods = await eventually(
    `${replicas} ready operator pods${image ? ` of ${image}` : ''} and no other`,
    async () => {
      const all = (await cluster.getJson<{ items: OperatorPod[] }>('-n', SYSTEM, 'pods', '-l', OPERATOR_PODS)).items;
      const settled =
        all.length === replicas &&
        all.every((pod) => !pod.metadata.deletionTimestamp && (!image || pod.spec.containers[0]?.image === image) && pod.status?.containerStatuses?.[0]?.ready);
      return settled && all;
    },
    120_000,
  );
  // People's verbs go through the aggregated API, which kube-apiserver serves once it reaches a replica.
  await cluster.kubectl('wait', '--for=condition=Available', '--timeout=120s', 'apiservice/v1alpha1.api.hyperspool.dev').catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await cluster.kubectl('get', 'apiservice', 'v1alpha1.api.hyperspool.dev', '-o', 'yaml').catch(() => '')}`);
  });
  return pods;
}

/**
 * Waits until no other file's Runs are left on the cluster (each file deletes its namespaces at its
 * end), for a file that moves the operator to a database of its own: an operator admits every Run
 * its database has no record of, so those Runs would run again there. A namespace that holds Runs
 * and is not being deleted is named in the timeout's message.
 */
export async function noRunsOfOtherFiles(cluster: Cluster, who: string): Promise<void> {
  await eventually(
    'no Run of another test left on the cluster',
    async () => {
      // On a node nothing was installed on yet (this file first), there is no Run kind at all.
      const left = await cluster.getJson<{ items: { metadata: { namespace: string } }[] }>('runs', '-A').catch((error: Error) => {
        if (/could not find the requested resource/.test(error.message)) return { items: [] };
        throw error;
      });
      if (left.items.length === 0) return true;
      const namespaces = await cluster.getJson<{ items: { metadata: { name: string }; status?: { phase?: string } }[] }>('namespaces');
      const stays = new Set(left.items.map((run) => run.metadata.namespace));
      const kept = namespaces.items.filter((ns) => stays.has(ns.metadata.name) && ns.status?.phase !== 'Terminating').map((ns) => ns.metadata.name);
      if (kept.length > 0)
        throw new Error(
          `${who} moves the operator to a database of its own, which would run again the Runs in ${kept.join(', ')}: delete them first (a node kept with HYPERSPOOL_E2E_KEEP=1 keeps them)`,
        );
      return false;
    },
    180_000,
  );
}

/** The claim config/quickstart's PostgreSQL keeps its data on. */
const DATABASE_CLAIM = 'hyperspool-postgres-data';

/**
 * A cluster with a default StorageClass (kind's, a cloud's) provisions the quickstart's claim
 * itself. The local node has no provisioner: a hostPath PersistentVolume on this machine (which
 * is the node), bound to that claim only, owned by PostgreSQL's uid (fsGroup does not reach a
 * hostPath volume). It lives in the node's state directory, so `hack/local-cluster.sh down` removes
 * it with the cluster whose etcd knew it.
 */
async function givenVolumeForTheDatabase(cluster: Cluster): Promise<void> {
  type Classes = { items: { metadata: { annotations?: Record<string, string> } }[] };
  const classes = await cluster.getJson<Classes>('storageclasses');
  if (classes.items.some((c) => c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true')) return;
  const path = join(process.env.HYPERSPOOL_NODE_DIR ?? '/tmp/hyperspool-node', 'volumes', DATABASE_CLAIM);
  mkdirSync(path, { recursive: true });
  chownSync(path, 999, 999);
  const volume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `${SYSTEM}-${DATABASE_CLAIM}` },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: '',
      claimRef: { namespace: SYSTEM, name: DATABASE_CLAIM },
      hostPath: { path, type: 'Directory' },
    },
  };
  await withFile('volume.json', JSON.stringify(volume), (file) => cluster.kubectl('apply', '-f', file));
}

/** The pod that holds the operator's leader Lease. */
export async function leaderPod(cluster: Cluster): Promise<string> {
  const lease = await cluster.getJson<{ spec?: { holderIdentity?: string } }>('-n', SYSTEM, 'lease', 'hyperspool-operator');
  // The identity is NAME@URL (src/operator/operator.ts): the pod's name, then where it serves.
  return lease.spec?.holderIdentity?.split('@')[0] ?? '';
}

/** A file's own namespace, on the install of this build (see openNamespace). */
export interface FileNamespace {
  cluster: Cluster;
  namespace: string;
  /** A kubeconfig whose user is a ServiceAccount token with edit in the namespace and the CLI's role. */
  userConfig: string;
  /** Removes what the file made (its namespace, its RoleBindings), unless HYPERSPOOL_E2E_KEEP; the install stays. */
  close(): Promise<void>;
}

/**
 * What most files begin with: the cluster, Hyperspool deployed, a namespace named `runLabel` with
 * its default ServiceAccount (pass pods run as it), and a person with edit there.
 */
export async function openNamespace(runLabel: string): Promise<FileNamespace> {
  const cluster = await openCluster(runLabel);
  const namespace = runLabel;
  await deployHyperspool(cluster);
  await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  // The controller manager makes each namespace's `default` ServiceAccount, which pass pods run as.
  await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
  const userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
  return {
    cluster,
    namespace,
    userConfig,
    async close() {
      if (!process.env.HYPERSPOOL_E2E_KEEP) {
        await cluster.kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
        await cluster.kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
      }
      await cluster.close();
    },
  };
}
