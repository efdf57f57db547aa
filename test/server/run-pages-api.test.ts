import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UI_DIR } from '../../src/server/ui-routes.js';
import { cli, cliOk, getRun, startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/** What the run page reads from the HTTP API (docs/api.md): paging, the timeline, approvals with forms, workflows, and the UI's files. */

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${dev.url}/v1${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

interface Page {
  runs: { id: string; workflow: string }[];
  next: string | null;
}

describe('the runs list, paged', () => {
  it('given 7 runs, when read 3 at a time, then each run comes once, newest first, and the last page says there is no next', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      const id = `dev:paging:run-${String(i).padStart(16, '0')}`;
      await dev.store.createRun({ id, project: 'paging', workflow: i % 2 ? 'odd.sh' : 'even.sh', interpreter: 'bash -eu', script: 'true', subject: i === 3 ? 'cust-3' : null });
      made.push(id);
    }
    const seen: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const { status, json } = await call('GET', `/runs?project=paging&limit=3${before ? `&before=${before}` : ''}`);
      expect(status).toBe(200);
      const page = json as unknown as Page;
      seen.push(...page.runs.map((run) => run.id));
      before = page.next;
      pages += 1;
    } while (before);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());

    const odd = (await call('GET', '/runs?project=paging&workflow=odd.sh')).json as unknown as Page;
    expect(odd.runs.map((run) => run.workflow)).toEqual(['odd.sh', 'odd.sh', 'odd.sh']);
    const subject = (await call('GET', '/runs?project=paging&subject=cust-3')).json as unknown as Page;
    expect(subject.runs.map((run) => run.id)).toEqual([made[3]]);

    const bad = await call('GET', '/runs?before=not-a-cursor');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain("'before'");
  });
});

describe('the timeline', () => {
  it('given a run with a failed step and a replayed sleep, then each call shows once with its times, exit code, and the pass that recorded it', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'tl.sh': `spool step one -- echo first\nspool sleep 1s\nspool step two --label again -- sh -c 'echo out; exit 3'\n` });
    const id = await submit(dev.url, dir, 'tl.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('failed');
    const { json } = await call('GET', `/runs/${encodeURIComponent(id)}/timeline`);
    const timeline = json.timeline as Record<string, unknown>[];
    expect(timeline.map((entry) => `${String(entry.verb)} ${String(entry.name)}`)).toEqual(['step one', 'sleep ', 'step two']);
    const [one, sleep, two] = timeline;
    expect(one).toMatchObject({ pass: 1, exitCode: 0, failed: false, result: { stdout: 'first\n' } });
    expect(sleep).toMatchObject({ pass: 1 });
    expect(Number(sleep?.durationMs)).toBeGreaterThanOrEqual(900);
    expect(two).toMatchObject({ pass: 2, exitCode: 3, failed: true, label: 'again' });
    expect(Date.parse(String(two?.startedAt))).toBeLessThanOrEqual(Date.parse(String(two?.endedAt)));
    expect((json.run as { passes: number }).passes).toBe(2);
  }, 60_000);
});

const FORM = `name: form
jobs:
  ask:
    approval:
      prompt: "Ship \${{ input.what }}?"
      form:
        count: { type: number, required: true, min: 1, max: 100 }
        note: { type: string, default: none }
        urgent: { type: boolean }
  after:
    depends_on: [ask]
    steps:
      - name: show
        run: echo "count=\${{ steps.ask.output.count }} note=\${{ steps.ask.output.note }} urgent=\${{ steps.ask.output.urgent }} by=\${{ steps.ask.output.answered_by }}"
`;

describe('approvals', () => {
  it('given a gate with a form, then the API shows it waiting with its prompt and fields, refuses wrong values by name, and takes right ones into the next job', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'form.yaml': FORM });
    const id = await submit(dev.url, dir, 'form.yaml', '--input', '{"what": "crates"}');
    await waitForChild(dev, id, 'ask', ['waiting']);
    const path = `/runs/${encodeURIComponent(id)}/approvals`;
    const { json } = await call('GET', path);
    const [gate] = json.approvals as Record<string, unknown>[];
    expect(gate).toMatchObject({ job: 'ask', state: 'waiting', prompt: 'Ship crates?', deadline: null, answeredBy: null });
    expect((gate?.form as { name: string }[]).map((field) => field.name)).toEqual(['count', 'note', 'urgent']);
    expect((gate?.form as Record<string, unknown>[]).map(({ min, max }) => [min, max])).toEqual([[1, 100], [null, null], [null, null]]);

    const refused = async (values: unknown, says: string) => {
      const answer = await call('POST', `${path}/ask`, { decision: 'approve', values });
      expect(answer.status, JSON.stringify(answer.json)).toBe(400);
      expect(JSON.stringify(answer.json)).toContain(says);
    };
    await refused({}, "'count' (count) is required");
    await refused({ count: 'many' }, "'count' must be a number");
    await refused({ count: 0 }, "'count' must be at least 1, not 0");
    await refused({ count: '-5000' }, "'count' must be at least 1, not -5000");
    await refused({ count: 100.5 }, "'count' must be at most 100, not 100.5");
    await refused({ count: 1, colour: 'red' }, "no field 'colour'");
    await refused({ count: 1, urgent: 'maybe' }, "'urgent' must be true or false");
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    const ok = await call('POST', `${path}/ask`, { decision: 'approve', values: { count: '12', urgent: true } });
    expect(ok.status).toBe(200);
    expect(ok.json.values).toEqual({ count: 12, note: 'none', urgent: true });
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    const { logs } = (await call('GET', `/runs/${encodeURIComponent(id)}/logs`)).json as { logs: { text: string }[] };
    expect(logs.map((line) => line.text).join('')).toMatch(/count=12 note=none urgent=true by=\S+/);
    const settled = ((await call('GET', path)).json.approvals as Record<string, unknown>[])[0];
    expect(settled).toMatchObject({ state: 'approved', values: { count: 12, note: 'none', urgent: true } });
    expect(typeof settled?.answeredBy).toBe('string');

    // Answered already: the first answer is final, and a later one is told whose it was (issue 28, bug 5).
    const late = await call('POST', `${path}/ask`, { decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ error: { code: 'already_answered' } });
  }, 90_000);
});

describe('spool approve --set', () => {
  it('answers a gate’s form from a terminal; a --set without = is a usage error', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'form.yaml': FORM });
    const id = await submit(dev.url, dir, 'form.yaml', '--input', '{"what": "boxes"}');
    await waitForChild(dev, id, 'ask', ['waiting']);
    const bad = await cli(dev.url, dir, ['approve', id, 'ask', '--set', 'count']);
    expect(bad.code).toBe(2);
    expect(bad.output).toContain("--set takes field=value, not 'count'");
    expect(await cliOk(dev.url, dir, ['approve', id, 'ask', '--set', 'count=3', '--set', 'note=by hand'])).toBe(`approved ask of ${id}\n`);
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    const { logs } = (await call('GET', `/runs/${encodeURIComponent(id)}/logs`)).json as { logs: { text: string }[] };
    expect(logs.map((line) => line.text).join('')).toContain('count=3 note=by hand urgent= by=');
  }, 90_000);
});

describe('workflows', () => {
  it('lists each workflow runs were started from once, with its count and last run, and not a pipeline’s jobs', async () => {
    const { json } = await call('GET', '/workflows?project=paging');
    const workflows = json.workflows as { name: string; runs: number; lastRun: { id: string } }[];
    expect(workflows.map((workflow) => [workflow.name, workflow.runs, workflow.lastRun.id])).toEqual([
      ['even.sh', 4, 'dev:paging:run-0000000000000006'],
      ['odd.sh', 3, 'dev:paging:run-0000000000000005'],
    ]);
    const all = (await call('GET', '/workflows')).json.workflows as { name: string }[];
    expect(all.map((workflow) => workflow.name)).toContain('form.yaml');
    expect(all.map((workflow) => workflow.name).some((name) => name.includes('#'))).toBe(false);
  });
});

describe('the web UI’s files', () => {
  const built = JSON.parse(readFileSync(join(UI_DIR, 'build.json'), 'utf8')) as { script: string; style: string };

  it('serves every page address as index.html, to be asked for again each time, with a policy that loads nothing from elsewhere', async () => {
    for (const path of ['/', '/runs', `/runs/${encodeURIComponent('dev:default:run-abc')}`, '/handlers', '/schedules', '/workflows', '/approvals']) {
      const response = await fetch(`${dev.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await response.text()).toContain(`/assets/${built.script}`);
    }
    const etag = (await fetch(`${dev.url}/runs`)).headers.get('etag') ?? '';
    // As a browser revalidates (fetch() would add Cache-Control: no-cache, which always gets the page).
    const revalidated = await new Promise<number>((resolve, reject) => {
      get(`${dev.url}/runs`, { headers: { 'If-None-Match': etag } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      }).on('error', reject);
    });
    expect(revalidated).toBe(304);
    expect((await fetch(`${dev.url}/nowhere`)).status).toBe(404);
  });

  it('answers a mistyped page address in a browser with the UI (which says "No such page") and 404; the API and clients asking for JSON keep its JSON 404', async () => {
    const browser = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const path of ['/runz', '/runs-of-mine/x', '/handlers/1']) {
      const response = await fetch(`${dev.url}${path}`, { headers: browser });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await response.text()).toContain(`/assets/${built.script}`);
    }
    for (const [path, headers] of [['/v1/runz', browser], ['/v1', browser], ['/runz', { Accept: 'application/json' }], ['/runz', {}], ['/integrations/nowhere', browser], ['/apis/hyperspool.dev/nowhere', browser], ['/openapi/v3', browser]] as const) {
      const response = await fetch(`${dev.url}${path}`, { headers });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).toContain('application/json');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });

  it('serves the hashed assets as immutable, gzipped to a browser that takes it', async () => {
    const script = await fetch(`${dev.url}/assets/${built.script}`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect((await script.text()).length).toBeGreaterThan(1000);
    const style = await fetch(`${dev.url}/assets/${built.style}`);
    expect(style.headers.get('content-type')).toContain('text/css');
    expect((await fetch(`${dev.url}/assets/main-NOSUCHHASH.js`)).status).toBe(404);
  });
});
