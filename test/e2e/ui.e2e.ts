// The web UI on a real cluster: `spool ui` serves the operator's pages on loopback through the
// operator's aggregated API, as the person (whatever their kubeconfig holds). A person with edit
// rights opens every page (runs and their filters, a run with its timeline and Shape, workflows and
// one workflow's stats, Start run, Emit event, schedules, handlers, approvals waiting), each drawn
// with no script error and no refused API call, and axe-core finds nothing serious on any; a person
// without RBAC on the namespace gets the page, which says clearly what they may not do, as the
// terminal does. Debian's Chromium (installed by .ci/run) loads the pages.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../support/axe.js';
import { chromiumPath, waitForPhase, waitForText } from '../support/browser.js';
import { deployHyperspool, E2E_LABEL, eventually, openCluster, repo, SYSTEM, type Cluster } from './support/cluster.js';

/** A pipeline that stops at an approval gate: the run page's gate and Shape, and the Approvals page. */
const REFUND = `name: refund
jobs:
  ask:
    approval:
      prompt: "Refund order 1042?"
      timeout: 1h
  refund:
    depends_on: [ask]
    steps:
      - name: refund
        run: echo refunded
`;

/** A graph with a typed input: Start run draws a form for it. */
const GREET = `name: greet
input:
  who: { description: Who, type: string, required: true }
nodes:
  - { id: hello, type: script, config: { interpreter: bash, body: "echo hello" } }
`;

type RunResource = { status?: { runId?: string; awaiting?: string; phase?: string } };

describe('spool ui on a real cluster', () => {
  const runLabel = `e2e-ui-${Date.now().toString(36)}`;
  const namespace = runLabel;
  const elsewhere = `${runLabel}-other`;
  let cluster: Cluster;
  let person = '';
  let outsider = '';
  let browser: Browser | undefined;
  const children: ChildProcess[] = [];
  /** The person's `spool ui`, shared by the tests that act as them. */
  let personUi: Promise<{ url: string; output: string }> | undefined;

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    for (const name of [namespace, elsewhere]) await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    const workflow = (name: string, filename: string, script: string) => ({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, namespace }, spec: { filename, script } });
    const run = (name: string, workflowName: string) => ({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name, namespace }, spec: { workflowRef: { name: workflowName } } });
    // Everything the pages show, applied at once so its pods start together.
    await cluster.apply(
      workflow('gate', 'gate.sh', 'spool step hello -- echo hello\necho "got $(spool wait signal go --timeout 1h)"\n'),
      run('gate-1', 'gate'),
      workflow('refund', 'refund.yaml', REFUND),
      run('refund-1', 'refund'),
      workflow('greet', 'greet.yaml', GREET),
      { ...run('greet-1', 'greet'), spec: { workflowRef: { name: 'greet' }, input: { who: 'the cluster' } } },
      workflow('on-order', 'on-order.sh', 'spool step ship -- echo shipped\n'),
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Handler', metadata: { name: 'orders', namespace }, spec: { event: 'order.placed', workflowRef: { name: 'on-order' } } },
      workflow('tick', 'tick.sh', 'echo tick\n'),
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'tick', namespace }, spec: { every: '1h', workflowRef: { name: 'tick' } } },
    );
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

  const personsUi = (): Promise<{ url: string; output: string }> => (personUi ??= startUi(person));

  /** The run id of a Run once it is `awaiting` this. */
  const runIdAwaiting = (name: string, awaiting: string): Promise<string> =>
    eventually(`${name} awaiting ${awaiting}`, async () => {
      const resource = await cluster.getJson<RunResource>('-n', namespace, 'run', name);
      return resource.status?.awaiting === awaiting && resource.status.runId;
    }, 180_000);

  it('given a Run waiting on a signal, when the person opens spool ui, then the run page shows it, titled with the Run’s name, through the aggregated API, and its signal form wakes it', async () => {
    const runId = await runIdAwaiting('gate-1', 'signal go');

    const { url } = await personsUi();
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

  it('given a Workflow, a Schedule, a Handler and a Run at an approval gate, when the person with edit rights opens every page through spool ui, then each is drawn with no script error, no refused API call and no serious axe violation', async () => {
    const refundId = await runIdAwaiting('refund-1', 'approval ask');
    const { url } = await personsUi();
    const page = await (await browser!.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    // A request the browser aborted is not one refused: leaving a run page aborts its poll of the log.
    page.on('requestfailed', (request) => {
      const why = request.failure()?.errorText ?? '';
      if (why !== 'net::ERR_ABORTED') problems.push(`failed: ${request.method()} ${request.url()}: ${why}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.request().method()} ${response.url()}`);
    });
    const violations: Record<string, string[]> = {};
    /** The page at `path` once `drawn` says so, checked by axe-core as it is then. */
    const visit = async (name: string, path: string | null, drawn: (page: Page) => Promise<unknown>) => {
      if (path !== null) await page.goto(`${url}${path}`);
      // A page not drawn says what went wrong on the way (a refused call, a script error) and what it shows.
      await drawn(page).catch(async (error: Error) => {
        throw new Error(`${name}: ${error.message}\n${problems.join('\n')}\n${await page.locator('main').innerText().catch(() => '')}`);
      });
      const found = await axeViolations(page);
      if (found.length > 0) violations[name] = found;
    };

    const refundRow = `table.runs tr[data-run="${refundId}"]`;
    await visit('the runs list', '/runs', (page) => page.locator(refundRow).waitFor());
    await visit('the runs list filtered by phase and text', '/runs?status=waiting&q=refund', async (page) => {
      await page.locator(refundRow).waitFor();
      await page.locator('.chips [aria-current="page"]').waitFor();
      expect(await page.locator('table.runs tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')))).toEqual([refundId]);
    });
    await visit('Emit event, having started a handler’s run', null, async (page) => {
      await page.locator('.emit-event summary').click();
      await page.getByLabel('Type').fill('order.placed');
      await page.getByLabel('Subject (optional)').fill('order-7');
      await page.getByLabel('Payload (JSON)').fill('{"order": 7}');
      await page.getByRole('button', { name: 'Emit' }).click();
      await waitForText(page.locator('.event-answer'), 'It started');
    });
    await visit('a pipeline at its approval gate, its timeline and Shape', `/runs/${encodeURIComponent(refundId)}`, async (page) => {
      await waitForPhase(page, 'waiting');
      await page.locator('.shape [data-vertex="ask"]').waitFor();
      await waitForText(page.locator('[data-gate="ask"]'), 'Refund order 1042?');
    });
    await visit('the workflows', '/workflows', (page) => waitForText(page.locator('main table'), 'refund.yaml'));
    await visit('Start run with a graph’s typed form', null, async (page) => {
      await page.getByRole('button', { name: /^Start run… \(greet/ }).click();
      await page.getByLabel('Who').waitFor();
    });
    await page.getByLabel('Who').fill('the page');
    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    await visit('the run Start run made', null, async (page) => {
      await page.waitForURL((address) => address.pathname.startsWith('/runs/'));
      await page.locator('.page-head [data-phase]').waitFor();
    });
    await visit('a workflow’s runs over time', null, async (page) => {
      await page.goto(`${url}/workflows`);
      await page.locator('main table a', { hasText: 'refund.yaml' }).click();
      await waitForText(page.locator('main'), 'Runs over time');
      await page.getByRole('button', { name: /^Start run…/ }).waitFor();
    });
    await visit('the schedules, Trigger now having started a run', '/schedules', async (page) => {
      const row = page.locator('tr[data-schedule="tick"]');
      await row.getByRole('button', { name: 'Trigger now: tick' }).click();
      await waitForText(page.getByRole('status').first(), 'started run-');
    });
    await visit('the handlers, with the event emitted', '/handlers', (page) => waitForText(page.locator('[data-handler="orders"] table.events'), 'order-7'));
    await visit('the approvals waiting', '/approvals', (page) => waitForText(page.locator('main'), 'Refund order 1042?'));

    expect(violations).toEqual({});
    expect(problems).toEqual([]);
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
