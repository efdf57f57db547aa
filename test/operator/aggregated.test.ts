import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request as plainRequest } from 'node:http';
import { request } from 'node:https';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { chromium, type Browser } from 'playwright-core';
import type { Run } from '../../src/api/responses.js';
import { chromiumPath } from '../support/browser.js';
import { removeTempDirs, spool, startSpool, tempDir, type SpoolResult } from '../support/spool.js';
import { untilPhase, eventually, exposeOperator, getRun, givenWorkflow, hostAddressForProxy, startCluster, startKubelet, whenRunCreated, type Cluster } from './support/cluster.js';

const SCRIPT = 'spool step a -- echo before\nspool wait signal go\necho after\n';
const run = promisify(execFile);

/**
 * People's verbs through the operator's aggregated API (api.hyperspool.dev): kube-apiserver
 * authenticates the person by whatever their kubeconfig holds, here client certificates (as kind,
 * minikube and kubeadm admins have), and passes the identity on over its front-proxy certificate;
 * the operator asks RBAC about the Run's subresource.
 */
describe('the aggregated API on a real kube-apiserver', () => {
  let cluster: Cluster;
  let operator: Operator;
  let kubelet: { stop(): Promise<void> };
  let dir: string;
  /** A person with a client certificate of the cluster's CA and config/rbac's hyperspool-edit in team-g. */
  let erin: string;
  /** A person with a client certificate of the cluster's CA and, at first, only get on Runs. */
  let carol: string;
  let browser: Browser;

  beforeAll(async () => {
    cluster = await startCluster('team-g');
    operator = await cluster.startLeader('op-agg', { host: hostAddressForProxy() });
    await exposeOperator(cluster, operator);
    cluster.kubectl('apply', '-f', 'config/manager/apiservice.yaml');
    cluster.kubectl('apply', '-f', 'config/rbac/user_roles.yaml');
    kubelet = startKubelet(cluster, operator.url);
    dir = tempDir('spool-aggregated-');
    erin = givenCertificatePerson(cluster, dir, 'erin');
    carol = givenCertificatePerson(cluster, dir, 'carol');
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    // Bound directly: no controller aggregates hyperspool-edit into edit here.
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-g',
      body: { metadata: { name: 'erin-edits' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hyperspool-edit' }, subjects: [{ kind: 'User', name: 'erin', apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    await rbac.createNamespacedRole({
      namespace: 'team-g',
      body: { metadata: { name: 'run-reader' }, rules: [{ apiGroups: ['hyperspool.dev'], resources: ['runs'], verbs: ['get', 'list'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-g',
      body: { metadata: { name: 'carol-reads' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'run-reader' }, subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    await eventually('the APIService Available', () => {
      const service = JSON.parse(cluster.kubectl('get', 'apiservice', 'v1alpha1.api.hyperspool.dev', '-o', 'json')) as { status?: { conditions?: { type: string; status: string }[] } };
      if (!service.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')) console.log(JSON.stringify(service.status));
      return Promise.resolve(service.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'));
    }, 60_000);
    await givenWorkflow(cluster, 'gate', 'gate.sh', SCRIPT);
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await kubelet?.stop();
    await cluster?.stop();
    removeTempDirs();
  });

  /**
   * kubectl without blocking this process: the operator answering kube-apiserver's proxied
   * requests runs in it (cluster.kubectl is synchronous).
   */
  const kubectl = async (kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await run(cluster.plane.kubectl, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  };

  const as = (kubeconfig: string, ...args: string[]): Promise<SpoolResult> =>
    spool([...args, '--kubeconfig', kubeconfig, '-n', 'team-g'], { cwd: dir, env: { SPOOL_SERVER: undefined } });

  it('serves discovery, so kubectl knows the subresources and RBAC reads naturally', async () => {
    const listed = await kubectl(erin, 'api-resources', '--api-group=api.hyperspool.dev', '--no-headers');
    const resources = listed.stdout;
    expect(resources).toMatch(/^runs\s+api\.hyperspool\.dev\/v1alpha1\s+true\s+RunRecord$/m);
    expect(resources).toMatch(/^events\s+api\.hyperspool\.dev\/v1alpha1\s+true\s+Event$/m);
    const discovery = JSON.parse((await kubectl(erin, 'get', '--raw', '/apis/api.hyperspool.dev/v1alpha1')).stdout) as { resources: { name: string; verbs: string[] }[] };
    expect(discovery.resources.map((r) => `${r.name}:${r.verbs.join(',')}`).sort()).toEqual(
      [
        'events:create',
        'runs:get,list,create',
        'runs/approve:create',
        'runs/artifacts:get',
        'runs/cancel:create',
        'runs/journal:get',
        'runs/log:get',
        'runs/reject:create',
        'runs/signal:create',
        'runs/timeline:get',
        'runs/shape:get',
        'runs/approvals:get',
        'runs/rerun:create',
        'workflows:list',
        'handlers:list',
        'schedules:list',
        'schedules/trigger:create',
        'ui:get',
      ].sort(),
    );
    expect((await kubectl(erin, 'auth', 'can-i', 'create', 'runs.api.hyperspool.dev', '--subresource=signal', '-n', 'team-g')).stdout.trim()).toBe('yes');
    expect((await kubectl(carol, 'auth', 'can-i', 'create', 'runs.api.hyperspool.dev', '--subresource=signal', '-n', 'team-g')).stdout.trim()).toBe('no');
  });

  it("given a Run waiting on a signal, when a person with a certificate and config/rbac's edit role signals it, then it wakes, and their logs and journal read it; a person RBAC does not allow is refused, naming the subresource", async () => {
    await whenRunCreated(cluster, 'gate-1', 'gate');
    await eventually('gate-1 waiting for its signal', async () => (await getRun(cluster, 'gate-1')).status?.awaiting === 'signal go', 60_000);
    // Both groups have `runs`: plain `kubectl get runs` is the Run resources, as people expect.
    expect((await kubectl(erin, 'get', 'runs', '-n', 'team-g', '-o', 'jsonpath={.items[*].apiVersion}')).stdout).toBe('hyperspool.dev/v1alpha1');

    // Carol may read the Run but not signal it: RBAC on runs/signal says no (kube-apiserver asks
    // first, and the operator asks again with a SubjectAccessReview).
    const refused = await as(carol, 'signal', 'gate-1', 'go', 'yes');
    expect(refused.code).toBe(1);
    expect(refused.output.trim()).toBe(
      'spool: runs.api.hyperspool.dev "gate-1" is forbidden: User "carol" cannot create resource "runs/signal" in API group "api.hyperspool.dev" in the namespace "team-g"',
    );
    const notLogs = await as(carol, 'logs', 'gate-1');
    expect(notLogs.code).toBe(1);
    expect(notLogs.output).toContain('User "carol" cannot get resource "runs/log" in API group "api.hyperspool.dev"');

    const signalled = await as(erin, 'signal', 'gate-1', 'go', 'yes');
    expect(signalled.output).toBe('signal go queued for gate-1\n');
    await untilPhase('run gate-1', () => getRun(cluster, 'gate-1'), 'Succeeded', 60_000);
    // The wait prints the signal's payload.
    expect((await as(erin, 'logs', 'gate-1')).output).toBe('before\nyes\nafter\n');
    expect((await as(erin, 'journal', 'gate-1')).output).toMatch(/wait\.signal\s+go/);

    // Once RBAC allows it (the edit role config/rbac ships), carol's own certificate is enough.
    await cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
      namespace: 'team-g',
      body: { metadata: { name: 'carol-edits' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hyperspool-edit' }, subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    expect((await as(carol, 'logs', 'gate-1')).output).toBe('before\nyes\nafter\n');
  });

  it("given a run that put an artifact, then spool status lists it and the person downloads it through runs/artifacts; one whom RBAC does not allow is refused", async () => {
    await givenWorkflow(cluster, 'report', 'report.sh', "printf 'hello from the run' | spool artifact put out/report.txt -\n");
    await whenRunCreated(cluster, 'report-1', 'report');
    await untilPhase('run report-1', () => getRun(cluster, 'report-1'), 'Succeeded', 60_000);

    const status = await as(erin, 'status', 'report-1');
    expect(status.output).toMatch(/^artifacts\s+out\/report\.txt {2}18 bytes {2}sha256 [0-9a-f]{12} {2}\S+$/m);
    const path = '/apis/api.hyperspool.dev/v1alpha1/namespaces/team-g/runs/report-1/artifacts';
    expect((await kubectl(erin, 'get', '--raw', `${path}/out/report.txt`)).stdout).toBe('hello from the run');
    // Dave has a certificate of the cluster's CA and no binding at all (carol is an editor by now).
    const dave = givenCertificatePerson(cluster, dir, 'dave');
    const refused = await kubectl(dave, 'get', '--raw', path);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('runs/artifacts');
  });

  it('given a gate with approvers from erin and group:release-managers, then frank approves by the group his certificate carries (1 of 2), gina whom RBAC allows but the gate does not name is refused, and erin opens it (issue 33, item 11)', async () => {
    const release = [
      'name: release',
      'jobs:',
      '  ask:',
      '    approval:',
      '      prompt: Ship it?',
      '      approvers:',
      '        count: 2',
      '        from: [erin, "group:release-managers"]',
      '      form:',
      '        note: { type: string }',
      '  ship:',
      '    depends_on: [ask]',
      '    steps:',
      '      - name: ship',
      '        run: echo "shipped, approved by ${{ steps.ask.output.approvals[0].by }} (${{ steps.ask.output.approvals[0].values.note }}) and ${{ steps.ask.output.answered_by }} (${{ steps.ask.output.note }})"',
      '',
    ].join('\n');
    await givenWorkflow(cluster, 'release', 'release.yaml', release);
    const frank = givenCertificatePerson(cluster, dir, 'frank', 'release-managers');
    const gina = givenCertificatePerson(cluster, dir, 'gina');
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    // RBAC lets both answer approvals; only the gate's `from` tells them apart.
    for (const subject of [{ kind: 'Group', name: 'release-managers' }, { kind: 'User', name: 'gina' }]) {
      await rbac.createNamespacedRoleBinding({
        namespace: 'team-g',
        body: { metadata: { name: `${subject.name}-edits` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hyperspool-edit' }, subjects: [{ ...subject, apiGroup: 'rbac.authorization.k8s.io' }] },
      });
    }
    await whenRunCreated(cluster, 'release-1', 'release');
    await eventually('release-1 at its gate', async () => (await getRun(cluster, 'release-1')).status?.awaiting === 'approval ask', 60_000);

    // The form's values go through the aggregated API too.
    expect((await as(frank, 'approve', 'release-1', 'ask', '--set', 'note=lgtm')).output).toBe('approved ask of release-1 (1 of 2 approvals: frank; waiting for 1 more)\n');
    const refused = await as(gina, 'approve', 'release-1', 'ask');
    expect(refused.code).toBe(1);
    expect(refused.output).toBe("spool: gina may not answer the approval 'ask': it asks erin, group:release-managers\n");
    expect((await getRun(cluster, 'release-1')).status?.awaiting).toBe('approval ask');

    expect((await as(erin, 'approve', 'release-1', 'ask', '--set', 'note=ship it')).output).toBe('approved ask of release-1 (2 of 2 approvals: frank, erin; the gate opens)\n');
    await untilPhase('run release-1', () => getRun(cluster, 'release-1'), 'Succeeded', 60_000);
    expect((await as(erin, 'logs', 'release-1')).output).toContain('shipped, approved by frank (lgtm) and erin (ship it)');
  });

  it('given --as, then a person RBAC lets impersonate hank approves as hank, and gina, whom it does not, is refused by the API server', async () => {
    const gate = ['name: hotfix', 'jobs:', '  ask:', '    approval:', '      prompt: Hotfix?', '      approvers:', '        count: 1', '        from: [hank]', ''].join('\n');
    await givenWorkflow(cluster, 'hotfix', 'hotfix.yaml', gate);
    const ivan = givenCertificatePerson(cluster, dir, 'ivan');
    const gina = givenCertificatePerson(cluster, dir, 'gina');
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: 'impersonate-hank' }, rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['hank'] }] } });
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: 'ivan-impersonates-hank' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-hank' }, subjects: [{ kind: 'User', name: 'ivan', apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    // Impersonated, the answer is hank's: RBAC must let hank answer approvals in the namespace. The
    // Run's name is looked up as the caller (ivan, gina: people of the team, who may read Runs).
    for (const user of ['hank', 'ivan', 'gina']) {
      await rbac
        .createNamespacedRoleBinding({
          namespace: 'team-g',
          body: { metadata: { name: `${user}-edits` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hyperspool-edit' }, subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }] },
        })
        .catch(() => undefined); // gina's may be there from the test before
    }
    await whenRunCreated(cluster, 'hotfix-1', 'hotfix');
    await eventually('hotfix-1 at its gate', async () => (await getRun(cluster, 'hotfix-1')).status?.awaiting === 'approval ask', 60_000);

    const refused = await as(gina, 'approve', 'hotfix-1', 'ask', '--as', 'hank');
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/^spool: users "hank" is forbidden: User "gina" cannot impersonate resource "users".*\n$/);
    expect((await getRun(cluster, 'hotfix-1')).status?.awaiting).toBe('approval ask');
    expect((await as(ivan, 'approve', 'hotfix-1', 'ask', '--as', 'hank')).output).toBe('approved ask of hotfix-1 (1 of 1 approval: hank; the gate opens)\n');
    await untilPhase('run hotfix-1', () => getRun(cluster, 'hotfix-1'), 'Succeeded', 60_000);
  });

  it('answers kubectl create --raw as the user, and an event emitted that way is recorded in the namespace of the path', async () => {
    writeFileSync(join(dir, 'event.json'), JSON.stringify({ type: 'order.paid', id: 'evt-1', payload: { order: 7 } }));
    const created = await kubectl(erin, 'create', '--raw', '/apis/api.hyperspool.dev/v1alpha1/namespaces/team-g/events', '-f', join(dir, 'event.json'));
    expect(created.stderr).toBe('');
    expect((JSON.parse(created.stdout) as { event?: { id?: string; project?: string } }).event).toMatchObject({ id: 'evt-1', project: 'team-g' });
    // A body may not name another namespace than the one RBAC was asked about.
    writeFileSync(join(dir, 'elsewhere.json'), JSON.stringify({ type: 'order.paid', project: 'team-x', payload: {} }));
    const refused = await kubectl(erin, 'create', '--raw', '/apis/api.hyperspool.dev/v1alpha1/namespaces/team-g/events', '-f', join(dir, 'elsewhere.json'));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("the body's project team-x is not the namespace team-g");
  });

  /** `spool ui --port 0 --no-open` as the person of this kubeconfig, in team-g: its loopback address, and what it has said. */
  const startUi = async (kubeconfig: string): Promise<{ url: string; output(): string; stop(): void }> => {
    const ui = startSpool(['ui', '--kubeconfig', kubeconfig, '-n', 'team-g', '--port', '0', '--no-open'], { cwd: dir, env: { SPOOL_SERVER: undefined } });
    void ui.done.then(() => undefined, () => undefined);
    const url = await eventually('spool ui to serve', () => Promise.resolve(/^(http:\/\/127\.0\.0\.1:\d+)\/runs$/m.exec(ui.output())?.[1] ?? (ui.output().startsWith('spool:') ? Promise.reject(new Error(ui.output())) : undefined)), 30_000);
    return { url, output: () => ui.output(), stop: () => process.kill(ui.pid, 'SIGTERM') };
  };

  it("given a person's client-certificate kubeconfig with edit in team-g, when they open spool ui, then the page and every API call it makes answer through the aggregated API, the run page is titled with the Run's name, and its actions act (issue 34, items 1 and 5)", async () => {
    await whenRunCreated(cluster, 'gate-2', 'gate');
    await whenRunCreated(cluster, 'release-2', 'release');
    const gate = await eventually('gate-2 waiting for its signal', async () => {
      const found = await getRun(cluster, 'gate-2');
      return found.status?.awaiting === 'signal go' && found.status.runId;
    }, 60_000);
    const release = await eventually('release-2 at its gate', async () => {
      const found = await getRun(cluster, 'release-2');
      return found.status?.awaiting === 'approval ask' && found.status.runId;
    }, 60_000);
    const report = (await getRun(cluster, 'report-1')).status?.runId ?? '';
    const ui = await startUi(erin);
    try {
      const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
        const answer = await fetch(`${ui.url}/v1${path}`, { method, ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }) });
        const text = await answer.text();
        expect(answer.ok, `${method} ${path}: ${answer.status} ${text}`).toBe(true);
        return JSON.parse(text) as T;
      };
      const runPath = (id: string): string => `/runs/${encodeURIComponent(id)}`;

      // The run's answer carries its Run; the runs list, searched as the page searches, too.
      expect((await call<{ run: Run }>('GET', runPath(gate))).run.resource).toEqual({ name: 'gate-2', namespace: 'team-g' });
      const hour = 3_600_000;
      const search = new URLSearchParams({ q: 'gate', since: new Date(Date.now() - hour).toISOString(), until: new Date(Date.now() + hour).toISOString(), sort: '-duration', counts: 'true', parent: 'none', limit: '50' });
      const found = await call<{ runs: Run[]; counts?: Record<string, number> }>('GET', `/runs?${search.toString()}`);
      expect(found.runs.find((listed) => listed.id === gate)?.resource).toEqual({ name: 'gate-2', namespace: 'team-g' });
      expect(found.runs.every((listed) => listed.workflow.includes('gate'))).toBe(true);
      expect(found.counts?.waiting).toBeGreaterThanOrEqual(1);
      // What the run page reads besides the run, on the pipeline with a gate.
      expect((await call<{ timeline: unknown[] }>('GET', `${runPath(release)}/timeline`)).timeline.length).toBeGreaterThan(0);
      expect((await call<{ approvals: { job: string }[] }>('GET', `${runPath(release)}/approvals`)).approvals.map((gateOf) => gateOf.job)).toEqual(['ask']);
      expect((await call<{ vertices: { name: string }[] }>('GET', `${runPath(release)}/shape`)).vertices.map((vertex) => vertex.name).sort()).toEqual(['ask', 'ship']);
      // A pipeline's jobs are its child runs (the gate's among them).
      const children = await call<{ runs: Run[] }>('GET', `/runs?parent=${encodeURIComponent(release)}&limit=1000`);
      expect(children.runs.length).toBeGreaterThan(0);
      expect(children.runs.every((child) => child.parentId === release)).toBe(true);
      expect(await call('GET', `${runPath(release)}/logs?after=0`)).toMatchObject({ logs: expect.any(Array) as unknown, run: { id: release, resource: { name: 'release-2', namespace: 'team-g' } } });
      expect((await call<{ artifacts: { name: string }[] }>('GET', `${runPath(report)}/artifacts`)).artifacts.map((artifact) => artifact.name)).toEqual(['out/report.txt']);
      const download = await fetch(`${ui.url}/v1${runPath(report)}/artifacts/${encodeURIComponent('out/report.txt')}`);
      expect(await download.text()).toBe('hello from the run');
      // The other pages' lists.
      const { workflows } = await call<{ workflows: { name: string }[] }>('GET', '/workflows');
      // A Workflow's runs are named NAME/FILE on a cluster: one segment of the /v1 path, though kube-apiserver decodes its %2F.
      const releaseWorkflow = workflows.find((workflow) => workflow.name.startsWith('release/'))?.name ?? '';
      expect(releaseWorkflow).toMatch(/^release\/.+\.yaml$/);
      const workflowPath = `/workflows/${encodeURIComponent(releaseWorkflow)}`;
      expect((await call<{ workflow: { name: string } }>('GET', workflowPath)).workflow.name).toBe(releaseWorkflow);
      expect((await call<{ buckets: unknown[] }>('GET', `${workflowPath}/stats?since=${new Date(Date.now() - hour).toISOString()}`)).buckets.length).toBeGreaterThan(0);
      expect(await call('GET', '/approvals/waiting')).toMatchObject({ caller: { user: 'erin' } });
      expect(await call('GET', '/handlers')).toMatchObject({ handlers: expect.any(Array) as unknown });
      expect(await call('GET', '/schedules')).toMatchObject({ schedules: expect.any(Array) as unknown });
      // The page's actions: an approval with its form (runs/approve), a cancel, a rerun.
      const approved = await call<{ approvals: { counted: number; needed: number; by: string[] } }>('POST', `${runPath(release)}/approvals/ask`, { decision: 'approve', values: { note: 'from the page' }, via: 'page' });
      expect(approved.approvals).toEqual({ counted: 1, needed: 2, by: ['erin'] });
      expect(await call('POST', `${runPath(release)}/cancel`)).toMatchObject({ cancelled: true });
      const rerun = await call<{ run: Run }>('POST', `${runPath(report)}/rerun`, {});
      expect(rerun.run.rerunOf?.runId).toBe(report);

      // The page itself, in a browser: titled with the Run's name, its key beside it; every call it
      // makes answered (data-ready), and its signal form wakes the run.
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${ui.url}${runPath(gate)}`);
      await page.locator('.run-page[data-ready="true"]').waitFor();
      expect(await page.locator('h1').innerText()).toBe(`Run gate-2 ${gate.split(':').at(-1) ?? ''}`);
      expect(await page.title()).toBe('gate-2 waiting · Hyperspool');
      expect(await page.locator('.error').count()).toBe(0);
      await page.getByLabel('Name').fill('go');
      await page.getByLabel('Payload (JSON, optional)').fill('"from the page"');
      await page.getByRole('button', { name: 'Send signal' }).click();
      await page.locator('.page-head [data-phase="succeeded"]').waitFor({ timeout: 60_000 });
      await page.goto(`${ui.url}/runs`);
      const row = page.locator(`table.runs tr[data-run="${gate}"]`);
      await row.waitFor();
      // The Run column (after the bulk-select box): the Run's name, the key beside it.
      expect(await row.locator('td:not(.pick-col)').first().innerText()).toBe(`gate-2 ${gate.split(':').at(-1) ?? ''}`);

      // Another web page cannot act through it as the person, nor a rebound DNS name reach it.
      const forged = await fetch(`${ui.url}/v1${runPath(gate)}/cancel`, { method: 'POST', headers: { Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body: '{}' });
      expect(forged.status).toBe(403);
      expect(await forged.json()).toMatchObject({ error: { code: 'forbidden_origin' } });
      const rebound = await new Promise<number>((resolve, reject) => {
        plainRequest(`${ui.url}/runs`, { headers: { Host: 'evil.example' } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(rebound).toBe(403);
    } finally {
      ui.stop();
    }
  });

  it('given a person the cluster knows but RBAC gives nothing in team-g, when they open spool ui, then the page loads and says, in words, what they may not do; the terminal says it too', async () => {
    const olga = givenCertificatePerson(cluster, dir, 'olga');
    const ui = await startUi(olga);
    try {
      const refusal = 'User "olga" cannot list resource "runs" in API group "api.hyperspool.dev" in the namespace "team-g"';
      expect(ui.output()).toContain(refusal);
      const answer = await fetch(`${ui.url}/v1/runs?limit=5`);
      expect(answer.status).toBe(403);
      expect(await answer.json()).toEqual({ error: { code: 'forbidden', message: expect.stringContaining(refusal) as unknown } });
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${ui.url}/runs`);
      const error = page.locator('.error');
      await error.waitFor();
      expect(await error.innerText()).toContain(refusal);
      expect(await error.innerText()).toContain('Ask for access (the view or edit role in this namespace');
      expect(await page.locator('h1').innerText()).toBe('Runs');
    } finally {
      ui.stop();
    }
  });

  it("given a Handler and a Schedule in team-g, then spool handler list and spool schedule list show them to a person's client certificate and to the admin's, and spool schedule trigger starts a run of it", async () => {
    const hyperspool = { group: 'hyperspool.dev', version: 'v1alpha1', namespace: 'team-g' };
    await cluster.custom.createNamespacedCustomObject({
      ...hyperspool,
      plural: 'handlers',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Handler', metadata: { name: 'on-invoice' }, spec: { event: 'invoice.sent', workflowRef: { name: 'gate' } } },
    });
    await cluster.custom.createNamespacedCustomObject({
      ...hyperspool,
      plural: 'schedules',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'nightly' }, spec: { cron: '0 3 * * *', workflowRef: { name: 'gate' } } },
    });
    for (const kubeconfig of [erin, cluster.plane.kubeconfigPath]) {
      await eventually('the handler listed', async () => (await as(kubeconfig, 'handler', 'list')).output.match(/^on-invoice\s+invoice\.sent\s+gate/m), 30_000);
      const schedules = await as(kubeconfig, 'schedule', 'list');
      expect(schedules.code, schedules.output).toBe(0);
      expect(schedules.output).toMatch(/^nightly\s/m);
    }
    // Trigger now, as the Schedules page's button does: a run of the Schedule, its Run labelled so.
    const triggered = await as(erin, 'schedule', 'trigger', 'nightly');
    expect([triggered.code, triggered.output]).toEqual([0, expect.stringMatching(/^k8s:team-g:run-[a-z0-9]{16}\n$/)]);
    const started = await eventually('the Run of the triggered run', async () => {
      const runs = JSON.parse((await kubectl(cluster.plane.kubeconfigPath, 'get', 'runs', '-n', 'team-g', '-l', 'hyperspool.dev/schedule=nightly', '-o', 'json')).stdout) as { items: { status?: { runId?: string } }[] };
      return runs.items.find((item) => item.status?.runId === triggered.output.trim());
    }, 30_000);
    expect(started.status?.runId).toBe(triggered.output.trim());
  });

  it("given a suspended Schedule, then spool schedule list, the Schedules page's API and kubectl get schedule agree (listed, suspended, no next tick), the page's Resume is refused with the kubectl patch that resumes it, and patched it ticks again (issue 34)", async () => {
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-g',
      plural: 'schedules',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'paused' }, spec: { every: '1h', suspend: true, workflowRef: { name: 'gate' } } },
    });
    const admin = cluster.plane.kubeconfigPath;
    const statusOf = async (): Promise<{ nextScheduleTime?: string; conditions?: { type: string; status: string; reason: string }[] }> =>
      (JSON.parse((await kubectl(admin, 'get', 'schedule', 'paused', '-n', 'team-g', '-o', 'json')).stdout) as { status?: object }).status ?? {};
    await eventually('paused listed as suspended', async () => /^paused\s+1h\s+suspended\s+0\s+gate/m.test((await as(erin, 'schedule', 'list')).output), 30_000);
    const suspended = await statusOf();
    expect(suspended.nextScheduleTime).toBeUndefined();
    expect(suspended.conditions?.find((condition) => condition.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Suspended' });

    const ui = await startUi(erin);
    try {
      type Listed = { schedules: { name: string; nextAt: string | null; suspendedAt: string | null }[] };
      const listed = async (): Promise<Listed['schedules'][number] | undefined> =>
        ((await (await fetch(`${ui.url}/v1/schedules`)).json()) as Listed).schedules.find((schedule) => schedule.name === 'paused');
      expect(await listed()).toMatchObject({ nextAt: null, suspendedAt: expect.any(String) as unknown });
      // The operator serves its API with triggersAreResources: spec.suspend decides, not the page.
      const resume = await fetch(`${ui.url}/v1/schedules/paused/resume`, { method: 'POST' });
      expect(resume.status).toBe(409);
      expect(await resume.json()).toEqual({
        error: { code: 'managed_by_resource', message: `on a cluster, a Schedule's spec.suspend says whether it ticks: kubectl patch schedule paused --type merge -p '{"spec":{"suspend":true}}' (false to resume)` },
      });
      expect((await listed())?.nextAt).toBeNull();

      expect((await kubectl(admin, 'patch', 'schedule', 'paused', '-n', 'team-g', '--type', 'merge', '-p', '{"spec":{"suspend":false}}')).code).toBe(0);
      const resumed = await eventually('paused ticking again', async () => {
        const schedule = await listed();
        return schedule?.nextAt && schedule;
      }, 30_000);
      expect(resumed.suspendedAt).toBeNull();
      // Its next tick is counted from the resume: an hour on.
      expect(Date.parse(resumed.nextAt ?? '') - Date.now()).toBeGreaterThan(50 * 60_000);
      await eventually('kubectl get schedule to say the same next tick', async () => (await statusOf()).nextScheduleTime === new Date(resumed.nextAt ?? '').toISOString().replace(/\.\d{3}Z$/, 'Z'), 30_000);
    } finally {
      ui.stop();
    }
  });

  it("given a run that keeps state, then a person with a certificate reads, changes and deletes its cells through the aggregated API's state, the next run reads the change, and a person RBAC gives nothing is refused", async () => {
    await givenWorkflow(cluster, 'stock', 'stock.sh', 'if [ -z "$(spool state get apples --entity shop)" ]; then spool state set apples 7 --entity shop; fi\necho "apples: $(spool state get apples --entity shop)"\n');
    await whenRunCreated(cluster, 'stock-1', 'stock');
    await untilPhase('run stock-1', () => getRun(cluster, 'stock-1'), 'Succeeded', 60_000);
    const shop = '/apis/api.hyperspool.dev/v1alpha1/namespaces/team-g/state/shop';
    const read = async (path: string): Promise<unknown> => JSON.parse((await kubectl(erin, 'get', '--raw', path)).stdout) as unknown;
    expect(await read(shop)).toEqual({ cells: [{ key: 'apples', value: '7', version: 1 }] });

    writeFileSync(join(dir, 'apples.json'), JSON.stringify({ value: '3' }));
    const replaced = await kubectl(erin, 'replace', '--raw', `${shop}/apples`, '-f', join(dir, 'apples.json'));
    expect(replaced.stderr).toBe('');
    expect(JSON.parse(replaced.stdout)).toEqual({ cell: { key: 'apples', value: '3', version: 2 } });
    await whenRunCreated(cluster, 'stock-2', 'stock');
    await untilPhase('run stock-2', () => getRun(cluster, 'stock-2'), 'Succeeded', 60_000);
    expect((await as(erin, 'logs', 'stock-2')).output).toBe('apples: 3\n');

    const stranger = givenCertificatePerson(cluster, dir, 'paul');
    const refused = await kubectl(stranger, 'get', '--raw', `${shop}/apples`);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('User "paul" cannot get resource "state/apples" in API group "api.hyperspool.dev" in the namespace "team-g"');
    expect(JSON.parse((await kubectl(erin, 'delete', '--raw', `${shop}/apples`)).stdout)).toEqual({ deleted: 'apples' });
    const gone = await kubectl(erin, 'get', '--raw', `${shop}/apples`);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('NotFound');
  });

  it('serves the UI through kube-apiserver as spool dev serves it: the page asked again each time, its hashed assets cached for good, a HEAD answered as its GET', async () => {
    const ui = await startUi(erin);
    try {
      const page = await fetch(`${ui.url}/runs`);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1] ?? '';
      const script = await fetch(`${ui.url}${asset}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // curl -I: the page's headers, no body.
      const head = await fetch(`${ui.url}/runs`, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type'), head.headers.get('cache-control'), await head.text()]).toEqual([200, 'text/html; charset=utf-8', 'no-cache', '']);
    } finally {
      ui.stop();
    }
  });

  it('believes the user headers only from kube-apiserver: a request to the operator without the front-proxy certificate is refused', async () => {
    const port = Number(operator.listening.aggregated.split(':').pop());
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const call = request(
        { host: hostAddressForProxy(), port, method: 'GET', path: '/apis/api.hyperspool.dev/v1alpha1/namespaces/team-g/runs/gate-1/log', rejectUnauthorized: false, headers: { 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters' } },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      call.on('error', reject);
      call.end();
    });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', code: 401, message: 'only kube-apiserver may call this API (a front-proxy client certificate is required)' });
  });
});

/**
 * A kubeconfig for `user` with a client certificate the cluster's CA signed (openssl, as an admin
 * would); the certificate's O is the group the cluster authenticates them in, when given.
 */
function givenCertificatePerson(cluster: Cluster, dir: string, user: string, group?: string): string {
  const pki = join(dirname(cluster.plane.kubeconfigPath), 'pki');
  const key = join(dir, `${user}.key`);
  const csr = join(dir, `${user}.csr`);
  const cert = join(dir, `${user}.crt`);
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key], { stdio: 'ignore' });
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', `/CN=${user}${group ? `/O=${group}` : ''}`, '-out', csr], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', join(pki, 'ca.crt'), '-CAkey', join(pki, 'ca.key'), '-set_serial', String(Date.now()), '-days', '1', '-out', cert], { stdio: 'ignore' });
  const server = cluster.kubeConfig.getCurrentCluster();
  const path = join(dir, `${user}.kubeconfig`);
  const b64 = (file: string): string => readFileSync(file).toString('base64');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: server?.server, 'certificate-authority-data': b64(join(pki, 'ca.crt')) } }],
      users: [{ name: user, user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) } }],
      contexts: [{ name: user, context: { cluster: 'test', user } }],
      'current-context': user,
    }),
  );
  return path;
}
