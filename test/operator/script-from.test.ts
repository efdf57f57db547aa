import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Operator } from '../../src/operator/operator.js';
import { agentOf, eventually, getRun, givenPodOf, givenWorkflow, jobsOf, startCluster, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * Workflow.spec.scriptFrom against a real kube-apiserver: the CRD's CEL rule, kustomize (the pinned
 * kubectl's) making a configMapGenerator's hashed name follow into Workflows through
 * config/kustomize, the examples/gitops layout applied as Argo CD would apply it, and what a
 * Workflow whose ConfigMap is missing does to its Runs, Handlers and Schedules.
 */
const REPO = join(import.meta.dirname, '..', '..');
const GITOPS = join(REPO, 'examples', 'gitops', 'workflows');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { scriptFrom?: { configMapKeyRef: { name: string; key: string } }; workflowRef?: { name: string } };
  data?: Record<string, string>;
}

interface Conditioned {
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

describe('Workflow.spec.scriptFrom', () => {
  let cluster: Cluster;
  let operator: Operator;
  const scratch = mkdtempSync(join(tmpdir(), 'spool-gitops-'));

  /** The pinned kubectl as cluster-admin; stdin optional. */
  const kubectl = (args: string[], input?: string): string => {
    if (input === undefined) return cluster.kubectl(...args);
    const file = join(scratch, `input-${Date.now()}.yaml`);
    writeFileSync(file, input);
    return cluster.kubectl(...args, '-f', file);
  };
  const build = (dir: string): { text: string; objects: Manifest[] } => {
    const text = kubectl(['kustomize', dir]);
    return { text, objects: parseAllDocuments(text).map((doc) => doc.toJS() as Manifest) };
  };
  const ready = async (plural: string, name: string, namespace = cluster.namespace) => {
    const object = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace, plural, name })) as Conditioned;
    return object.status?.conditions?.find((c) => c.type === 'Ready');
  };
  /** A copy of examples/gitops/workflows whose files a test may change, still using this repository's config/kustomize (kustomize wants it relative). */
  const copyOfGitops = (name: string): string => {
    const dir = join(scratch, name);
    cpSync(GITOPS, dir, { recursive: true });
    const kustomization = join(dir, 'kustomization.yaml');
    writeFileSync(kustomization, readFileSync(kustomization, 'utf8').replace('../../../config/kustomize', relative(dir, join(REPO, 'config', 'kustomize'))));
    return dir;
  };

  beforeAll(async () => {
    cluster = await startCluster('team-scripts');
    // One replica: a long lease, so a loaded machine's slow renewals do not hand its passes over mid-test.
    operator = await cluster.startLeader('op-scripts', { leaseDurationSeconds: 15 });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('given a Workflow with both script and scriptFrom, or neither, then the API server refuses it saying to give exactly one', () => {
    const workflow = (spec: object): string => JSON.stringify({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'both', namespace: cluster.namespace }, spec: { filename: 'a.sh', ...spec } });
    const ref = { configMapKeyRef: { name: 'scripts', key: 'a.sh' } };
    for (const spec of [{ script: 'echo a\n', scriptFrom: ref }, {}]) {
      expect(() => kubectl(['apply', '--server-side', '--dry-run=server'], workflow(spec))).toThrow(/give a Workflow exactly one of script and scriptFrom/);
    }
    expect(kubectl(['apply', '--server-side', '--dry-run=server'], workflow({ scriptFrom: ref }))).toContain('serverside-applied (server dry run)');
  });

  it('given examples/gitops/workflows, when kubectl kustomize builds it, then each scriptFrom names the generated ConfigMap (hash suffix and all), a changed file changes that name, and without config/kustomize the name would not follow', () => {
    const { objects } = build(GITOPS);
    const configMap = objects.find((o) => o.kind === 'ConfigMap');
    expect(configMap?.metadata.name).toMatch(/^scripts-[a-z0-9]{10}$/);
    const workflows = objects.filter((o) => o.kind === 'Workflow');
    expect(workflows.map((w) => w.metadata.name).sort()).toEqual(['deploy', 'nightly-report', 'order-paid']);
    for (const workflow of workflows) {
      const ref = workflow.spec?.scriptFrom?.configMapKeyRef;
      expect(ref?.name, workflow.metadata.name).toBe(configMap?.metadata.name);
      expect(configMap?.data?.[ref?.key ?? ''], `${workflow.metadata.name}'s key`).toBe(readFileSync(join(GITOPS, ref?.key ?? ''), 'utf8'));
    }
    expect(objects.filter((o) => o.kind === 'Handler' || o.kind === 'Schedule').map((o) => o.spec?.workflowRef?.name).sort()).toEqual(['nightly-report', 'order-paid']);

    const changed = copyOfGitops('changed');
    writeFileSync(join(changed, 'deploy.sh'), `${readFileSync(join(changed, 'deploy.sh'), 'utf8')}echo one more line\n`);
    const renamed = build(changed).objects;
    const newName = renamed.find((o) => o.kind === 'ConfigMap')?.metadata.name;
    expect(newName).toMatch(/^scripts-/);
    expect(newName).not.toBe(configMap?.metadata.name);
    expect(renamed.find((o) => o.metadata.name === 'deploy')?.spec?.scriptFrom?.configMapKeyRef.name).toBe(newName);

    // The component is what carries the name: without it, kustomize leaves scriptFrom as written.
    const bare = copyOfGitops('bare');
    const kustomization = join(bare, 'kustomization.yaml');
    writeFileSync(kustomization, readFileSync(kustomization, 'utf8').replace(/components:[\s\S]*$/, ''));
    expect(build(bare).objects.find((o) => o.metadata.name === 'deploy')?.spec?.scriptFrom?.configMapKeyRef.name).toBe('scripts');

    // A namePrefix (one kustomization per team, say) reaches the triggers' workflowRef too.
    const prefixed = copyOfGitops('prefixed');
    writeFileSync(join(prefixed, 'kustomization.yaml'), `${readFileSync(join(prefixed, 'kustomization.yaml'), 'utf8')}namePrefix: blue-\n`);
    const blue = build(prefixed).objects;
    expect(blue.find((o) => o.kind === 'Handler')?.spec?.workflowRef?.name).toBe('blue-order-paid');
    expect(blue.find((o) => o.metadata.name === 'blue-deploy')?.spec?.scriptFrom?.configMapKeyRef.name).toMatch(/^blue-scripts-/);
  });

  it('given examples/gitops applied as Argo CD applies it, then its Workflows, Handler and Schedule are Ready, a Run gets deploy.sh as in git, and after deploy.sh changes in git a new Run gets the new script while the first keeps its own', async () => {
    await cluster.core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    const applied = kubectl(['apply', '--server-side'], build(GITOPS).text);
    expect(applied).toContain('workflow.hyperspool.dev/deploy serverside-applied');
    for (const [plural, name] of [['workflows', 'deploy'], ['workflows', 'order-paid'], ['workflows', 'nightly-report'], ['handlers', 'order-paid'], ['schedules', 'nightly-report']] as const) {
      const condition = await eventually(`${plural}/${name} Ready`, async () => ((await ready(plural, name, 'team-a'))?.status === 'True' ? ready(plural, name, 'team-a') : null));
      expect(condition, `${plural}/${name}`).toMatchObject({ status: 'True' });
    }
    expect((await ready('workflows', 'nightly-report', 'team-a'))?.message).toMatch(/^pipeline nightly-report\.yaml from ConfigMap scripts-[a-z0-9]+ key nightly-report\.yaml$/);

    const runOf = async (name: string) => {
      await cluster.custom.createNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-a', plural: 'runs', body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { workflowRef: { name: 'deploy' } } } });
      const runId = await eventually(`${name} admitted`, async () => {
        const run = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-a', plural: 'runs', name })) as { status?: { runId?: string } };
        return run.status?.runId && (await operator.store.getRun(run.status.runId)) ? run.status.runId : null;
      });
      return (await operator.store.getRun(runId))?.script;
    };
    const original = readFileSync(join(GITOPS, 'deploy.sh'), 'utf8');
    expect(await runOf('deploy-1')).toBe(original);

    // A commit changes deploy.sh: a new ConfigMap name, a new Workflow generation.
    const changed = copyOfGitops('commit-2');
    writeFileSync(join(changed, 'deploy.sh'), `${original}spool step notify -- echo deployed\n`);
    kubectl(['apply', '--server-side'], build(changed).text);
    await eventually('deploy Ready on the new ConfigMap', async () => (await ready('workflows', 'deploy', 'team-a'))?.message.includes(build(changed).objects.find((o) => o.kind === 'ConfigMap')?.metadata.name ?? '?'));
    expect(await runOf('deploy-2')).toBe(`${original}spool step notify -- echo deployed\n`);
    // Run 1 was admitted with the old script and keeps it (its later passes replay against it).
    const first = (await cluster.custom.getNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-a', plural: 'runs', name: 'deploy-1' })) as { status?: { runId?: string } };
    expect((await operator.store.getRun(first.status?.runId ?? ''))?.script).toBe(original);
  });

  it("given Argo CD's own Application CRD (from the argo-cd module test/argocd pins), then examples/gitops/application.yaml passes a server-side dry run, pointing at the kustomization", async () => {
    const version = /github\.com\/argoproj\/argo-cd\/v3 (v\S+)/.exec(readFileSync(join(REPO, 'test', 'argocd', 'go.mod'), 'utf8'))?.[1] ?? '';
    const download = JSON.parse(
      execFileSync('go', ['mod', 'download', '-json', `github.com/argoproj/argo-cd/v3@${version}`], { cwd: scratch, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto' } }),
    ) as { Dir: string };
    kubectl(['apply', '--server-side', '-f', join(download.Dir, 'manifests', 'crds', 'application-crd.yaml')]);
    kubectl(['create', 'namespace', 'argocd']);
    // Until the CRD is established the dry run fails with "no matches for kind": try until it answers.
    const applied = await eventually('the Application dry run', () => Promise.resolve(kubectl(['apply', '--server-side', '--dry-run=server', '-f', join(REPO, 'examples', 'gitops', 'application.yaml')])));
    expect(applied).toContain('application.argoproj.io/team-a-workflows serverside-applied (server dry run)');
    const application = parseAllDocuments(readFileSync(join(REPO, 'examples', 'gitops', 'application.yaml'), 'utf8'))[0]?.toJS() as { spec: { source: { path: string } } };
    expect(join(REPO, application.spec.source.path)).toBe(GITOPS);
  }, 300_000);

  it('given a Workflow whose ConfigMap is missing, then it is not Ready saying which, its Run waits Pending saying why and its Handler is not Ready; when the ConfigMap appears (first without the key), then the Workflow says so, and once the key is there the Run starts with that script', async () => {
    const { namespace } = cluster;
    await givenWorkflow(cluster, 'late', 'late.sh', { configMapKeyRef: { name: 'late-scripts', key: 'late.sh' } });
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'handlers',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Handler', metadata: { name: 'late' }, spec: { event: 'late.happened', workflowRef: { name: 'late' } } },
    });
    expect(await eventually('late not Ready', () => ready('workflows', 'late'))).toMatchObject({ status: 'False', reason: 'ConfigMapNotFound', message: `ConfigMap late-scripts not found in namespace ${namespace}` });
    expect(await eventually('the Handler not Ready', () => ready('handlers', 'late'))).toMatchObject({
      status: 'False',
      reason: 'ConfigMapNotFound',
      message: `Workflow late has no script yet: ConfigMap late-scripts not found in namespace ${namespace}`,
    });

    await whenRunCreated(cluster, 'late-1', 'late');
    const pending = await eventually('late-1 Pending with a message', async () => ((await getRun(cluster, 'late-1')).status?.message ? getRun(cluster, 'late-1') : null));
    expect(pending.status).toMatchObject({
      phase: 'Pending',
      message: `Workflow late has no script yet: ConfigMap late-scripts not found in namespace ${namespace}; the run starts once it has`,
    });
    // Waiting means no run in the store and no pass: nothing starts on a script it does not have.
    expect(await operator.store.getRun(pending.status?.runId ?? '')).toBeNull();

    await cluster.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'late-scripts' }, data: { 'other.sh': 'echo other\n' } } });
    expect(await eventually('the key reported missing', async () => ((await ready('workflows', 'late'))?.reason === 'ConfigMapKeyNotFound' ? ready('workflows', 'late') : null))).toMatchObject({
      status: 'False',
      message: 'ConfigMap late-scripts has no key late.sh (it has other.sh)',
    });
    expect((await getRun(cluster, 'late-1')).status?.phase).toBe('Pending');

    await cluster.core.patchNamespacedConfigMap(
      { namespace, name: 'late-scripts', body: { data: { 'late.sh': 'spool step hello -- echo hello\n' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await eventually('late Ready', async () => ((await ready('workflows', 'late'))?.status === 'True' ? ready('workflows', 'late') : null))).toMatchObject({
      reason: 'Valid',
      message: 'runs late.sh from ConfigMap late-scripts key late.sh with bash -eu',
    });
    expect(await eventually('the Handler Ready', async () => ((await ready('handlers', 'late'))?.status === 'True' ? ready('handlers', 'late') : null))).toMatchObject({ reason: 'WorkflowFound' });

    // The Run starts: its pass's pod gets the script from the ConfigMap.
    const key = await eventually('the run key label', async () => (await getRun(cluster, 'late-1')).metadata.labels?.['hyperspool.dev/run']);
    const job = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const runId = (await getRun(cluster, 'late-1')).status?.runId ?? '';
    const agent = agentOf(operator.url, runId, 1, (await givenPodOf(cluster, job)).token);
    expect((await agent.spec()).body).toMatchObject({ filename: 'late.sh', script: 'spool step hello -- echo hello\n', interpreter: 'bash -eu' });
  }, 60_000);
});
