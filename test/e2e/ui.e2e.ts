// The web UI on a real cluster: `spool ui` serves the operator's run page on loopback through the
// operator's aggregated API, as the person (whatever their kubeconfig holds), and a person
// without RBAC on the namespace gets the page, which says clearly what they may not do, as the
// terminal does. Debian's Chromium (installed by .ci/run) loads the page.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from '../support/browser.js';
import { deployHyperspool, E2E_LABEL, eventually, openCluster, repo, SYSTEM, type Cluster } from './support/cluster.js';

describe('spool ui on a real cluster', () => {
  const runLabel = `e2e-ui-${Date.now().toString(36)}`;
  const namespace = runLabel;
  const elsewhere = `${runLabel}-other`;
  let cluster: Cluster;
  let person = '';
  let outsider = '';
  let browser: Browser | undefined;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    for (const name of [namespace, elsewhere]) await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    person = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
    // Someone with Hyperspool rights in another namespace only.
    outsider = await cluster.givenPerson(elsewhere, 'outsider', 'hyperspool-view');
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await browser?.close();
    if (!cluster) return;
    if (!process.env.HYPERSPOOL_E2E_KEEP) {
      for (const name of [namespace, elsewhere]) await cluster.kubectl('delete', 'namespace', name, '--wait=false').catch(() => undefined);
      await cluster.kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    }
    await cluster.close();
  });

  /** `spool ui --no-open --port 0` as the person of this kubeconfig; answers the address it prints, and what it said. */
  function startUi(kubeconfig: string): Promise<{ url: string; output: string }> {
    const child = spawn(process.execPath, [join(repo, 'bin', 'spool'), 'ui', '--kubeconfig', kubeconfig, '-n', namespace, '--port', '0', '--no-open'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const url = /^(http:\/\/127\.0\.0\.1:\d+)\/runs$/m.exec(output)?.[1];
        if (url) resolve({ url, output });
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`spool ui exited ${String(code)}:\n${output}`)));
    });
  }

  it('given a Run waiting on a signal, when the person opens spool ui, then the run page shows it, titled with the Run’s name, through the aggregated API, and its signal form wakes it', async () => {
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'gate', namespace }, spec: { filename: 'gate.sh', script: 'spool step hello -- echo hello\necho "got $(spool wait signal go --timeout 1h)"\n' } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: 'gate-1', namespace }, spec: { workflowRef: { name: 'gate' } } },
    );
    type RunResource = { status?: { runId?: string; awaiting?: string; phase?: string } };
    const runId = await eventually('gate-1 awaiting its signal', async () => {
      const run = await cluster.getJson<RunResource>('-n', namespace, 'run', 'gate-1');
      return run.status?.awaiting === 'signal go' && run.status.runId;
    }, 180_000);

    const { url } = await startUi(person);
    // The files and the API, through one loopback address.
    const index = await fetch(`${url}/runs`);
    expect(index.status).toBe(200);
    // The API server's proxy adds its own words (`no-cache, private`); ours is among them.
    expect(index.headers.get('cache-control')).toContain('no-cache');
    const { runs } = (await (await fetch(`${url}/v1/runs?limit=10`)).json()) as { runs: { id: string }[] };
    expect(runs.map((run) => run.id)).toContain(runId);
    // Another web page cannot act through it with the person's token.
    const forged = await fetch(`${url}/v1/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST', headers: { Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body: '{}' });
    expect(forged.status).toBe(403);

    const page = await (await browser!.newContext()).newPage();
    await page.goto(`${url}/runs/${encodeURIComponent(runId)}`);
    await page.locator('.page-head [data-phase="waiting"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('h1 .run-id').innerText()).toBe('gate-1');
    await page.locator('.timeline tr[data-name="hello"]').waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('go');
    await page.getByLabel('Payload (JSON, optional)').fill('"from the page"');
    await page.getByRole('button', { name: 'Send signal' }).click();
    await page.locator('.page-head [data-phase="succeeded"]').waitFor({ timeout: 180_000 });
    await eventually('the log', async () => ((await page.locator('.log').textContent()) ?? '').includes('got from the page'), 60_000);
    await page.goto(`${url}/runs`);
    await page.locator(`table.runs tr[data-run="${runId}"]`).waitFor();
  });

  it('given a person with no rights on the namespace, when they run spool ui, then the terminal and the page say who may not do what, in words, not raw JSON', async () => {
    const { url, output } = await startUi(outsider);
    // kube-apiserver's own refusal of the first read (the runs list, through the aggregated API).
    const refusal = `cannot list resource "runs" in API group "api.hyperspool.dev" in the namespace "${namespace}"`;
    expect(output).toContain(refusal);
    expect(output).toContain('outsider');
    const page = await (await browser!.newContext()).newPage();
    await page.goto(`${url}/runs`);
    const error = page.locator('.error');
    await error.waitFor({ timeout: 60_000 });
    expect(await error.innerText()).toContain(refusal);
  });
});
