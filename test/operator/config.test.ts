import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { RbacAuthorizationV1Api, type V1ClusterRole, type V1ClusterRoleBinding, type V1Deployment, type V1Role } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createMetrics } from '../../src/operator/kube/metrics.js';
import { untilPhase, agentOf, eventually, getRun, givenPodOf, givenWorkflow, jobsOf, startCluster, whenJobFinishes, whenRunCreated, type Cluster } from './support/cluster.js';

const REPO = join(import.meta.dirname, '..', '..');
const SCRIPT = 'spool step a -- echo one\nspool sleep 2s\nspool step b -- echo two\n';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

describe('config/ on a real kube-apiserver', () => {
  let cluster: Cluster;
  /** kubectl as cluster-admin; answers stdout and stderr (warnings land there), throws on failure. */
  let kubectl: (args: string[], input?: string) => { stdout: string; stderr: string };
  let build: (dir: string) => { text: string; objects: Manifest[] };

  beforeAll(async () => {
    // Off by default in kube-apiserver, on in some distributions (OpenShift): with it, a Job owned
    // by a Run with blockOwnerDeletion needs update on runs/finalizers, so the role is tested
    // against the stricter cluster.
    const extra = process.env.KUBE_APISERVER_EXTRA_ARGS;
    process.env.KUBE_APISERVER_EXTRA_ARGS = '--enable-admission-plugins=OwnerReferencesPermissionEnforcement';
    try {
      cluster = await startCluster('team-config');
    } finally {
      if (extra === undefined) delete process.env.KUBE_APISERVER_EXTRA_ARGS;
      else process.env.KUBE_APISERVER_EXTRA_ARGS = extra;
    }
    kubectl = (args, input) => {
      const result = spawnSync(cluster.plane.kubectl, ['--kubeconfig', cluster.plane.kubeconfigPath, ...args], { cwd: REPO, encoding: 'utf8', input });
      if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${result.stderr}`);
      return { stdout: result.stdout, stderr: result.stderr };
    };
    build = (dir) => {
      const text = kubectl(['kustomize', dir]).stdout;
      return { text, objects: parseAllDocuments(text).map((doc) => doc.toJS() as Manifest) };
    };
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('given config/default and config/prometheus, when built and applied with a server-side dry run, then the API server accepts every object, and every metric the alerts use is one the operator exports', () => {
    const install = build('config/default');
    expect(install.objects.map((o) => o.kind).sort()).toEqual(
      ['APIService', 'ClusterRole', 'ClusterRole', 'ClusterRole', 'ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition', 'Deployment', 'Namespace', 'Role', 'RoleBinding', 'RoleBinding', 'Service', 'ServiceAccount'].sort(),
    );
    const applied = kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], install.text).stdout;
    for (const object of install.objects) expect(applied).toContain(`${object.metadata.name} serverside-applied (server dry run)`);

    // The Prometheus Operator's CRDs are not installed here, so the alerts are checked against
    // the operator's own registry instead: a misspelt metric is an alert that can never fire.
    const monitoring = build('config/prometheus').objects;
    expect(monitoring.every((o) => o.apiVersion.startsWith('monitoring.coreos.com/'))).toBe(true);
    const rules = monitoring.filter((o) => o.kind === 'PrometheusRule') as unknown as { spec: { groups: { rules: { expr: string }[] }[] } }[];
    const used = new Set(rules.flatMap((r) => r.spec.groups.flatMap((g) => g.rules.flatMap((rule) => rule.expr.match(/\bhyperspool_\w+/g) ?? []))));
    expect([...used]).toEqual(expect.arrayContaining(['hyperspool_runs_failed_total', 'hyperspool_oldest_running_pass_seconds', 'hyperspool_reconcile_errors_total']));
    const exported = new Set(createMetrics({ version: 'test' }).registry.getMetricsAsArray().map((metric) => metric.name));
    for (const name of used) expect(exported, `${name} is not a metric of src/operator/kube/metrics.ts`).toContain(name.replace(/_(bucket|sum|count)$/, ''));
  });

  it('given the Deployment, then it runs 2 non-root replicas read-only with no capabilities, probed on the metrics port, and the API server finds nothing against the restricted Pod Security Standard', () => {
    const deployment = build('config/manager').objects.find((o) => o.kind === 'Deployment') as unknown as V1Deployment;
    const pod = deployment.spec?.template.spec;
    const container = pod?.containers[0];
    expect(deployment.spec?.replicas).toBe(2);
    expect(pod?.serviceAccountName).toBe('hyperspool-operator');
    expect(pod?.securityContext?.runAsNonRoot).toBe(true);
    expect(container?.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    // A named probe port must resolve to 9464: /readyz is served only by the probes-and-metrics server.
    const portOf = (port: unknown): unknown => container?.ports?.find((p) => p.name === port)?.containerPort ?? port;
    expect([container?.livenessProbe?.httpGet?.path, portOf(container?.livenessProbe?.httpGet?.port)]).toEqual(['/healthz', 9464]);
    expect([container?.readinessProbe?.httpGet?.path, portOf(container?.readinessProbe?.httpGet?.port)]).toEqual(['/readyz', 9464]);
    const fieldOf = (name: string): string | undefined => container?.env?.find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
    expect([fieldOf('POD_NAMESPACE'), fieldOf('POD_NAME'), fieldOf('POD_IP')]).toEqual(['metadata.namespace', 'metadata.name', 'status.podIP']);

    // The namespace's label for real, then the Deployment once more: Pod Security admission warns
    // about a workload whose pods the namespace's level would refuse.
    kubectl(['apply', '--server-side', '-f', 'config/manager/namespace.yaml']);
    const { stderr } = kubectl(['apply', '--server-side', '--dry-run=server', '-f', 'config/manager/deployment.yaml']);
    expect(stderr).not.toMatch(/PodSecurity/);
  });

  it('given config/rbac applied and the operator running with a token of its ServiceAccount, when a Run sleeps between two passes, then it ends Succeeded with an Event, and nothing the operator asked of the API server was refused', async () => {
    // Least: exactly the calls the operator makes (src/operator), and no wildcard anywhere.
    const rbacObjects = build('config/rbac').objects;
    const role = rbacObjects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'hyperspool-operator') as unknown as V1ClusterRole;
    const lease = rbacObjects.find((o) => o.kind === 'Role') as unknown as V1Role;
    const grants = (rules: V1ClusterRole['rules']): string[] =>
      (rules ?? []).flatMap((r) => (r.apiGroups ?? []).flatMap((g) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${g || 'core'}/${res}:${v}`)))).sort();
    expect(grants(role.rules)).toEqual(
      [
        ...['get', 'list', 'watch', 'create', 'patch', 'delete'].map((v) => `hyperspool.dev/runs:${v}`),
        ...['workflows', 'handlers', 'schedules', 'activityclasses'].flatMap((res) => [`hyperspool.dev/${res}:list`, `hyperspool.dev/${res}:watch`]),
        ...['runs', 'workflows', 'handlers', 'schedules'].map((res) => `hyperspool.dev/${res}/status:patch`),
        'hyperspool.dev/runs/finalizers:update',
        ...['create', 'list', 'watch', 'delete', 'deletecollection', 'patch'].map((v) => `batch/jobs:${v}`),
        ...['get', 'list', 'watch', 'patch'].map((v) => `core/pods:${v}`),
        'core/configmaps:get',
        'core/namespaces:get',
        'core/events:create',
        'authentication.k8s.io/tokenreviews:create',
        'authorization.k8s.io/subjectaccessreviews:create',
      ].sort(),
    );
    expect(lease.metadata?.namespace).toBe('hyperspool-system');
    expect(grants(lease.rules)).toEqual(['coordination.k8s.io/leases:create', 'coordination.k8s.io/leases:delete', 'coordination.k8s.io/leases:get', 'coordination.k8s.io/leases:list', 'coordination.k8s.io/leases:update']);
    expect(grants([...(role.rules ?? []), ...(lease.rules ?? [])]).join('\n')).not.toContain('*');
    // What people get (the tests act as people with exactly these): edit and view in their
    // namespace, and the service proxy to the operator, by name only.
    const people = (name: string): string[] => grants((rbacObjects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === name) as unknown as V1ClusterRole).rules);
    const crud = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
    // The aggregated API serves every /v1 route (src/operator/aggregated): view reads them all, edit does them all.
    const readApi = ['get', 'list'].map((v) => `api.hyperspool.dev/*:${v}`);
    expect(people('hyperspool-edit')).toEqual(
      [
        ...['workflows', 'runs', 'handlers', 'schedules'].flatMap((res) => crud.map((v) => `hyperspool.dev/${res}:${v}`)),
        ...['events', 'state'].flatMap((res) => ['create', 'get', 'list', 'update', 'delete'].map((v) => `hyperspool.dev/${res}:${v}`)),
        ...['get', 'list', 'create', 'update', 'patch', 'delete'].map((v) => `api.hyperspool.dev/*:${v}`),
      ].sort(),
    );
    expect(people('hyperspool-view')).toEqual(
      [
        ...['workflows', 'runs', 'handlers', 'schedules'].flatMap((res) => [res, `${res}/status`]).flatMap((res) => ['get', 'list', 'watch'].map((v) => `hyperspool.dev/${res}:${v}`)),
        'hyperspool.dev/state:get',
        'hyperspool.dev/state:list',
        ...readApi,
      ].sort(),
    );
    const cli = rbacObjects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'hyperspool-cli') as unknown as V1ClusterRole;
    expect(cli.rules).toEqual([{ apiGroups: [''], resources: ['services/proxy'], resourceNames: ['hyperspool-operator', 'hyperspool-operator:http'], verbs: ['get', 'create'] }]);
    // spool ui's files, nobody's data, to everyone signed in; nothing else.
    expect(people('hyperspool-ui')).toEqual(['api.hyperspool.dev/ui:get']);
    const ui = rbacObjects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'hyperspool-ui') as unknown as V1ClusterRoleBinding;
    expect([ui.roleRef.name, ui.subjects]).toEqual(['hyperspool-ui', [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }]]);

    // Sufficient: the operator acts only as its ServiceAccount, with config/rbac applied as it is
    // (support/cluster.ts does both for every operator test).
    const whoami = spawnSync(cluster.plane.kubectl, ['--kubeconfig', cluster.operatorKubeconfigPath, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { encoding: 'utf8' });
    expect(whoami.stdout).toBe('system:serviceaccount:hyperspool-system:hyperspool-operator');
    // The operator reports failed calls (a 403 among them) on stderr and retries, so a flow that
    // gets through could still hide a refusal: stderr is kept and read at the end.
    const stderr = vi.spyOn(process.stderr, 'write');
    const operator = await cluster.startLeader('op-least');
    // Ready means the informers listed every kind: the Deployment's readiness probe, answered.
    await eventually('/readyz to answer 200', async () => (await fetch(`${operator.healthUrl}/readyz`)).ok);
    // Its script in a ConfigMap (spec.scriptFrom), which the operator reads with get.
    await cluster.core.createNamespacedConfigMap({ namespace: cluster.namespace, body: { metadata: { name: 'nap-script' }, data: { 'nap.sh': SCRIPT } } });
    await givenWorkflow(cluster, 'nap', 'nap.sh', { configMapKeyRef: { name: 'nap-script', key: 'nap.sh' } });

    // The flow of passes.test.ts's first test, condensed.
    await whenRunCreated(cluster, 'nap-1', 'nap');
    const key = await eventually('the run key label', async () => (await getRun(cluster, 'nap-1')).metadata.labels?.['hyperspool.dev/run']);
    const job1 = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const runId = (await getRun(cluster, 'nap-1')).status?.runId ?? '';
    const pass1 = agentOf(operator.url, runId, 1, (await givenPodOf(cluster, job1)).token);
    const step = await pass1.call({ verb: 'step', name: 'a' });
    expect(step.body).toMatchObject({ status: 'execute' });
    await pass1.call({ verb: 'done', position: step.body.position, stdout: 'one\n', exitCode: 0 });
    expect((await pass1.call({ verb: 'sleep', ms: 2000 })).body).toMatchObject({ status: 'suspended' });
    await whenJobFinishes(cluster, job1);

    const job2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((j) => j.metadata?.labels?.['hyperspool.dev/pass'] === '2'), 15_000);
    const pass2 = agentOf(operator.url, runId, 2, (await givenPodOf(cluster, job2)).token);
    expect((await pass2.call({ verb: 'step', name: 'a' })).body).toMatchObject({ status: 'ok', replayed: true });
    expect((await pass2.call({ verb: 'sleep', ms: 2000 })).body).toMatchObject({ status: 'ok' });
    const stepB = await pass2.call({ verb: 'step', name: 'b' });
    await pass2.call({ verb: 'done', position: stepB.body.position, stdout: 'two\n', exitCode: 0 });
    expect((await pass2.exit(0)).status).toBe(200);

    await untilPhase('run nap-1', () => getRun(cluster, 'nap-1'), 'Succeeded');
    await eventually('a Succeeded Event', async () => {
      const events = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=nap-1' });
      return events.items.some((event) => event.reason === 'Succeeded');
    });

    // A person's request: TokenReview, the Run looked up by label, and a SubjectAccessReview, all
    // as the operator. A viewer (hyperspool-view, bound directly: no aggregation controller runs here).
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    const { namespace } = cluster;
    await cluster.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'viewer' } } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: { metadata: { name: 'viewer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hyperspool-view' }, subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace }] },
    });
    const viewer = (await cluster.core.createNamespacedServiceAccountToken({ namespace, name: 'viewer', body: { spec: { audiences: [] } } })).status?.token;
    const read = await fetch(`${operator.url}/v1/runs/${encodeURIComponent(runId)}`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(read.status).toBe(200);

    const said = stderr.mock.calls.map(([chunk]) => String(chunk)).join('');
    stderr.mockRestore();
    // A whole 403, not one inside a port or a millisecond (CI, 2026-12-06: "127.0.0.1:34031").
    expect(said).not.toMatch(/\b403\b|forbidden/i);
  });
});
