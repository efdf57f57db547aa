// The Helm chart (deploy/helm/hyperspool) installed with `helm install` on the real node (issue 34,
// item 9): a release of its own in a namespace of its own, with the chart's bundled PostgreSQL, and
// a Run that finishes under it. test/operator/helm-chart.test.ts checks what the chart renders
// against config/; this checks that what it renders runs.
//
// The operator and the CRDs are cluster-wide (one install per cluster), so this file stands in for
// the suite's install while it runs, as upgrade.e2e.ts does: the suite's operator Deployment is
// deleted, the chart takes over the cluster-wide objects `kubectl apply -k` made (--take-ownership)
// and points them at its namespace, and afterAll uninstalls the release and puts the suite's
// install back (deployHyperspool). Its operator has a database of its own, so the file first waits
// until no other file's Runs are left.
//
//   npm run test:e2e -- test/e2e/helm.e2e.ts
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART, helmBinary } from '../support/helm.js';
import { deployHyperspool, E2E_LABEL, eventually, noRunsOfOtherFiles, openCluster, OPERATOR_PODS, repo, sh, SYSTEM, untilPhase, type Cluster } from './support/cluster.js';

interface RunResource {
  status?: { phase?: string; message?: string; passes?: number };
}

const APISERVICE = 'apiservice/v1alpha1.api.hyperspool.dev';

describe('the Helm chart installed with helm install on a real node', { timeout: 600_000 }, () => {
  const runLabel = `e2e-${Date.now().toString(36)}`;
  /** The release's namespace, and the one its Runs execute in. */
  const system = `${runLabel}-helm`;
  const namespace = `${runLabel}-helm-runs`;
  const release = 'hyperspool';
  let cluster: Cluster;
  /** A person with edit in the Runs' namespace (a ServiceAccount token), as people use the CLI. */
  let userConfig = '';

  const kubectl = (...args: string[]): Promise<string> => cluster.kubectl(...args);
  const helm = (...args: string[]): Promise<string> => sh(helmBinary(), [...args, '--kubeconfig', cluster.kubeconfig]);
  const operatorLogs = (): Promise<string> =>
    kubectl('-n', system, 'logs', '-l', OPERATOR_PODS, '--prefix', '--tail=100').catch((error: Error) => error.message);

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    // The suite's install as every file finds it (a no-op apply when it is there), so the release
    // always adopts the same objects; then its operator stops until afterAll: one operator at a time.
    await deployHyperspool(cluster);
    await noRunsOfOtherFiles(cluster, 'the Helm test');
    await kubectl('-n', SYSTEM, 'delete', 'deployment', 'hyperspool-operator', '--timeout=120s');
    await eventually('the suite operator pods gone', async () => {
      const pods = await cluster.getJson<{ items: unknown[] }>('-n', SYSTEM, 'pods', '-l', OPERATOR_PODS);
      return pods.items.length === 0;
    }, 120_000);
    // The release's namespace as docs/operator.md says to make it: the restricted Pod Security Standard.
    await cluster.apply(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: system, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    );
    await eventually('the default ServiceAccount', () => kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
  });

  afterAll(async () => {
    if (!cluster) return;
    await kubectl('delete', 'namespace', namespace, '--timeout=180s').catch(() => undefined);
    await helm('uninstall', release, '-n', system, '--wait', '--timeout=180s').catch(() => undefined);
    await kubectl('delete', 'namespace', system, '--timeout=180s').catch(() => undefined);
    await kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    // The suite's install back for the files after this one (the CRDs the release kept stay).
    await deployHyperspool(cluster);
    await cluster.close();
  });

  it('given the chart with its bundled PostgreSQL, when installed with helm install in a namespace of its own, then the operator and the aggregated API serve from there, a Run finishes and its log reads back, and helm uninstall keeps the CRDs', async () => {
    // The local node has no storage provisioner: the bundled PostgreSQL keeps its data in an
    // emptyDir (postgresql.persistence.enabled=false); its image is the suite's (no registry here).
    const postgresImage = process.env.HYPERSPOOL_E2E_POSTGRES_IMAGE ?? 'hyperspool/postgres:dev';
    // The suite's `kubectl apply -k` made the cluster-wide objects (CRDs, ClusterRoles, the
    // APIService): the release adopts them and points them at its namespace.
    const adopt = ['--take-ownership', '--force-conflicts'];
    const values = ['--set', 'postgresql.enabled=true', '--set', 'postgresql.persistence.enabled=false', '--set-string', `postgresql.image=${postgresImage}`];
    await helm('install', release, CHART, '-n', system, ...adopt, ...values);
    await kubectl('-n', system, 'rollout', 'status', 'deployment/hyperspool-postgres', '--timeout=180s');
    await kubectl('-n', system, 'rollout', 'status', 'deployment/hyperspool-operator', '--timeout=240s').catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await operatorLogs()}`);
    });
    expect(await kubectl('get', APISERVICE, '-o', 'jsonpath={.spec.service.namespace}')).toBe(system);
    await kubectl('wait', '--for=condition=Available', '--timeout=120s', APISERVICE);
    const status = JSON.parse(await helm('status', release, '-n', system, '-o', 'json')) as { info: { status: string } };
    expect(status.info.status).toBe('deployed');

    await cluster.apply(
      {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'hello', namespace },
        spec: { filename: 'hello.sh', script: 'spool step greet -- echo hello from helm\nspool sleep 10s\nspool step again -- echo again\n' },
      },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: 'hello-1', namespace }, spec: { workflowRef: { name: 'hello' } } },
    );
    const run = await untilPhase('hello-1', () => cluster.getJson<RunResource>('-n', namespace, 'run', 'hello-1'), 'Succeeded', 180_000, () => operatorLogs());
    // The sleep ended the first pass; the second, started by the timer, replayed the first step and finished.
    expect(run.status?.passes, await cluster.lostPasses(namespace, 'hello-1')).toBe(2);
    // Through the aggregated API the chart registered, to this release's operator and database,
    // authorized by the person's edit role, which the chart's hyperspool-edit aggregates into.
    const logs = await sh(process.execPath, [join(repo, 'bin', 'spool'), 'logs', 'hello-1', '--kubeconfig', userConfig, '-n', namespace]);
    expect(logs).toBe('hello from helm\nagain\n');

    await kubectl('delete', 'namespace', namespace, '--timeout=180s');
    await helm('uninstall', release, '-n', system, '--wait', '--timeout=180s');
    expect(await kubectl('-n', system, 'get', 'deployments', '-o', 'name')).toBe('');
    expect(await kubectl('get', 'clusterrole', 'hyperspool-operator', '--ignore-not-found', '-o', 'name')).toBe('');
    // Kept (helm.sh/resource-policy: keep): deleting a CRD deletes every object of its kind.
    expect(await kubectl('get', 'crd', 'runs.hyperspool.dev', '-o', 'name')).toBe('customresourcedefinition.apiextensions.k8s.io/runs.hyperspool.dev\n');
  });
});
