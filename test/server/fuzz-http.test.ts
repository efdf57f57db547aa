import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev/dev-server.js';
import { API_ROUTES } from '../../src/api/requests.js';
import { ACT_AS_HEADER } from '../../src/api/act-as.js';
import type { SqlClient } from '../../src/store/sql.js';
import { startDev } from '../support/dev.js';
import { propertyRuns } from '../support/property.js';
import { removeTempDirs } from '../support/spool.js';

/**
 * The HTTP API under random and mutated requests (issues 15 and 28): every route of the table, with
 * its path parameters, query and body varied. Whatever is sent, the answer is never a 5xx; a 4xx
 * says why with a code and records nothing (no run, signal, event, state, handler, schedule,
 * throttle or artifact more), and the server answers the next request. Scripts in valid bodies are
 * `true`, so the runs a valid request starts are harmless.
 */
let dev: DevServer;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** The tables a request may write to, and that nothing else writes to meanwhile (runs of `true` only change their own rows). */
const WRITTEN = ['runs', 'signals', 'events', 'cells', 'handlers', 'schedules', 'throttles', 'artifacts'];

/** How many rows each of those tables holds, read from the embedded store itself. */
async function recorded(): Promise<Record<string, unknown>> {
  const db = (dev.store as unknown as { db: SqlClient }).db;
  const [counts] = await db.query(`select ${WRITTEN.map((table) => `(select count(*) from ${table})::int as ${table}`).join(', ')}`);
  return counts ?? {};
}

/** A valid body for each route that takes one, to mutate. */
const SOURCE = { workflow: 'f.sh', interpreter: 'bash -eu', script: 'true' };
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  'POST /runs': {
    ...SOURCE,
    input: { a: 1 },
    idempotencyKey: 'k',
    throttle: { limit: 1, periodMs: 1000, key: 't' },
    lenient: false,
  },
  'POST /runs/:id/signals': { name: 'go', payload: { a: 1 } },
  'POST /runs/:id/approvals/:job': { decision: 'approve', values: { reason: 'ok' } },
  'POST /events': { type: 'fuzz.event', subject: 's', payload: { a: 1 } },
  'PUT /handlers/:name': { eventType: 'fuzz.never', ...SOURCE },
  'PUT /schedules/:name': { cron: '0 0 1 1 *', ...SOURCE },
  'POST /schedules/:name/suspend': {},
  'POST /schedules/:name/resume': {},
  'PUT /state/:entity/:key': { value: 'v' },
  'POST /agent/runs/:run/passes/:pass/logs': { text: 'x' },
  'POST /agent/runs/:run/passes/:pass/exit': { code: 0, signal: null },
  'POST /agent/runs/:run/activities/:name/attempts/:attempt': { stdout: 'x', exitCode: 3, stderrTail: 'no account 42' },
};

const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', 'a\u0000b', 'x'.repeat(300), -1, 1.5, 1e300, '1e309', 'perl', null, true, [], {}, { toString: {} }),
);

const segment = fc.oneof(
  fc.constantFrom('x', 'dev:default:run-0000000000000000', '%00', '%E0%A4%A', '..', '%2F', 'a'.repeat(300), ''),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
);

/** A request: a route of the table (or a near miss), a method, path parameters, query and body. */
const request = fc
  .tuple(
    fc.constantFrom(...API_ROUTES),
    fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'route'),
    fc.array(segment, { minLength: 4, maxLength: 4 }),
    fc.dictionary(
      fc.constantFrom('limit', 'after', 'status', 'project', 'parent', 'before', 'x', 'limit ', 'q', 'since', 'until', 'sort', 'counts'),
      fc.oneof(
        fc.string(),
        fc.constantFrom('-5', '1.5', '1e309', 'a%00', '%FF', '%', '_', "'", 'true', '-duration', 'created', '2026-02-30', '2026-12-06T08:00:00Z', '2026-12-06T08:00:00+14:00', '9999-12-31'),
      ),
    ),
    fc.constantFrom('drop', 'add', 'replace', 'none', 'garbage'),
    fc.nat(),
    fc.string(),
    anyValue,
    // `spool --as NAME` (x-spool-as): who a request acts as on spool dev; any text may come.
    fc.option(fc.oneof(fc.constantFrom('alice', '', ' ', 'group:admins', 'x'.repeat(300), '__proto__'), fc.stringMatching(/^[ -~]{0,40}$/)), { nil: undefined }),
  )
  .map(([route, methodChoice, params, query, how, pick, key, value, actAs]) => {
    let at = 0;
    const path = route.path.replace(/:\w+/g, () => params[at++] ?? 'x');
    const method = methodChoice === 'route' ? route.method : methodChoice;
    const body: Record<string, unknown> = { ...(VALID_BODIES[`${route.method} ${route.path}`] ?? {}) };
    const fields = Object.keys(body);
    const field = fields[pick % Math.max(fields.length, 1)] ?? 'x';
    if (how === 'drop') delete body[field];
    else if (how === 'add') body[key || 'extra'] = value;
    else if (how === 'replace') body[field] = value;
    const search = new URLSearchParams(query).toString();
    return {
      method,
      url: `/v1${path}${search ? `?${search}` : ''}`,
      body: method === 'GET' ? undefined : how === 'garbage' ? JSON.stringify(value).slice(1) : JSON.stringify(body),
      headers: { ...(method === 'GET' ? {} : { 'content-type': 'application/json' }), ...(actAs === undefined ? {} : { [ACT_AS_HEADER]: actAs }) },
    };
  });

/**
 * Properties that fail only because of a bug another change is fixing (issue 28): printed, not yet
 * checked. Remove a line when its fix lands; the cases then hold it.
 */
const OPEN_BUGS: Record<string, string | undefined> = {};

/** A valid body with one thing no valid request holds: text that is not UTF-8, nesting thousands deep, an empty idempotency key. */
const invalidRequest = fc
  .tuple(
    fc.constantFrom('POST /runs', 'POST /events', 'PUT /state/:entity/:key'),
    fc.constantFrom('not-utf8', 'deep', 'empty-key'),
    fc.integer({ min: 5_000, max: 50_000 }),
    fc.uint8Array({ minLength: 1, maxLength: 4 }).map((bytes) => Buffer.from([0xff, ...bytes.map((byte) => 0x80 | byte)])),
  )
  .map(([route, bug, depth, bytes]) => {
    const valid = VALID_BODIES[route] ?? {};
    const [method = 'POST', path = ''] = route.split(' ');
    const url = `/v1${path.replace(':entity', 'fuzz').replace(':key', 'k').replace(':name', 'fuzz-invalid')}`;
    if (bug === 'empty-key') return { what: 'an empty idempotency key', bug, method: 'POST', url: '/v1/runs', body: Buffer.from(JSON.stringify({ ...VALID_BODIES['POST /runs'], idempotencyKey: '' })) };
    // Nesting where any JSON is taken (input, payload, value), where only a parser's depth limits it; bytes in a string.
    const [field] = bug === 'deep' ? Object.keys(valid).filter((key) => ['input', 'payload', 'value'].includes(key)) : Object.keys(valid).filter((key) => typeof valid[key] === 'string');
    const marker = '@@here@@';
    const text = JSON.stringify({ ...valid, [field ?? 'x']: bug === 'deep' ? marker : `a${marker}b` });
    const [head = '', tail = ''] = text.split(`"${bug === 'deep' ? marker : `a${marker}b`}"`);
    const middle = bug === 'deep' ? Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`) : Buffer.concat([Buffer.from('"a'), bytes, Buffer.from('b"')]);
    return { what: bug === 'deep' ? `nesting ${depth} deep in ${field}` : `bytes ${bytes.toString('hex')} in ${field}`, bug, method, url, body: Buffer.concat([Buffer.from(head), middle, Buffer.from(tail)]) };
  });

/** A graph whose typed inputs a run's input must fit (docs/graphs.md); `rush` is typed only by its default. */
const TYPED_GRAPH = {
  workflow: 'typed.yaml',
  interpreter: 'graph',
  script: `input:
  order: { type: string, required: true }
  amount: { type: number, min: 1, max: 500 }
  region: { type: string, options: [eu, us] }
  rush: { default: false }
nodes:
  - { id: pause, type: sleep, config: { duration: 1h } }
`,
};

/** Whether an input fits TYPED_GRAPH's typed inputs, said here from the document, not by the server's code. */
function fitsTypedGraph(input: unknown): boolean {
  if (input === null) return false; // order is required
  if (typeof input !== 'object' || Array.isArray(input)) return false;
  const given = input as Record<string, unknown>;
  const has = (key: string) => Object.prototype.hasOwnProperty.call(given, key);
  if (typeof given.order !== 'string') return false;
  if (has('amount') && !(typeof given.amount === 'number' && given.amount >= 1 && given.amount <= 500)) return false;
  return !has('region') || given.region === 'eu' || given.region === 'us';
}

/** Inputs near and far from what TYPED_GRAPH takes: any JSON, or its keys with right, wrong and missing values. */
const typedInput = fc.oneof(
  anyValue,
  fc.record(
    {
      order: fc.oneof(fc.string({ maxLength: 8 }), anyValue),
      amount: fc.oneof(fc.integer({ min: -5, max: 600 }), fc.double({ noNaN: true, noDefaultInfinity: true }), anyValue),
      region: fc.oneof(fc.constantFrom('eu', 'us', 'EU', 'mars', ''), anyValue),
      rush: anyValue,
      extra: anyValue,
    },
    { requiredKeys: [] },
  ),
  // A NUL anywhere is refused before the input is looked at (bad_request: PostgreSQL cannot store it).
).filter((input) => !JSON.stringify(input ?? null).includes('\\u0000'));

describe('the HTTP API, fuzzed', () => {
  it('never answers 5xx; a 4xx says why with a code, records nothing, and the server answers the next request', async () => {
    await fc.assert(
      fc.asyncProperty(request, async ({ method, url, body, headers }) => {
        const before = await recorded();
        const response = await fetch(`${dev.url}${url}`, { method, headers, ...(body === undefined ? {} : { body }) });
        const text = await response.text();
        const said = `${method} ${url} ${JSON.stringify(headers)} ${body ?? ''} → ${response.status} ${text}`;
        expect(response.status, said).toBeLessThan(500);
        // A `..` segment can climb out of /v1 (fetch resolves it, as a browser would): the UI's
        // page answers there, so only answers inside the API must be JSON.
        const inApi = new URL(url, dev.url).pathname.startsWith('/v1/');
        if (text && inApi) expect(() => JSON.parse(text) as unknown, said).not.toThrow();
        if (response.status < 400 || !inApi) return;
        const refusal = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
        expect(refusal.error?.code, said).toMatch(/^[a-z_]+$/);
        expect(refusal.error?.message, said).toMatch(/^[^\n]+$/);
        expect(await recorded(), said).toEqual(before);
        expect((await fetch(`${dev.url}/v1/runs?limit=1`)).status, `after ${said}`).toBe(200);
      }),
      propertyRuns('the HTTP API', 400),
    );
    expect((await fetch(`${dev.url}/healthz`)).status).toBe(200);
    const submitted = await fetch(`${dev.url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SOURCE),
    });
    expect(submitted.status).toBe(201);
    // Whatever schedules and handlers valid mutations made are removed, so nothing keeps running.
    for (const kind of ['schedules', 'handlers'] as const) {
      const listed = (await (await fetch(`${dev.url}/v1/${kind}`)).json()) as Record<string, { name: string }[]>;
      for (const { name } of listed[kind] ?? [])
        await fetch(`${dev.url}/v1/${kind}/${encodeURIComponent(name)}`, { method: 'DELETE' });
    }
  }, 180_000);

  it('holds a graph’s run input to its typed inputs: one that fits makes the run, any other is a 400 invalid_input naming the input, recording nothing', async () => {
    await fc.assert(
      fc.asyncProperty(typedInput, async (input) => {
        const sent = JSON.parse(JSON.stringify({ ...TYPED_GRAPH, input })) as { input: unknown };
        const before = await recorded();
        const response = await fetch(`${dev.url}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sent) });
        const text = await response.text();
        const said = `input ${JSON.stringify(sent.input)} → ${response.status} ${text}`;
        if (fitsTypedGraph(sent.input)) {
          expect(response.status, said).toBe(201);
          return;
        }
        expect(response.status, said).toBe(400);
        const { error } = JSON.parse(text) as { error: { code: string; message: string } };
        expect(error.code, said).toBe('invalid_input');
        expect(error.message, said).toMatch(/^(input '(order|amount|region)' (is required|must be) [^\n]+|the graph declares typed inputs \(order, amount, region\), so its input must be a JSON object, not [^\n]+)$/);
        expect(await recorded(), said).toEqual(before);
      }),
      propertyRuns('a graph’s typed inputs', 150),
    );
  }, 120_000);

  it('refuses with a 4xx and a code, recording nothing, what no valid request holds: deep nesting, text that is not UTF-8, an empty idempotency key', async () => {
    const skipped: string[] = [];
    await fc.assert(
      fc.asyncProperty(invalidRequest, async ({ what, bug, method, url, body }) => {
        const before = await recorded();
        const response = await fetch(`${dev.url}${url}`, { method, body: new Uint8Array(body), headers: { 'content-type': 'application/json' } });
        const text = await response.text();
        const said = `${what}: ${method} ${url} → ${response.status} ${text.slice(0, 300)}`;
        const open = OPEN_BUGS[bug];
        if (open) skipped.push(`${said} [${open}]`);
        else {
          expect(response.status, said).toBeGreaterThanOrEqual(400);
          expect(response.status, said).toBeLessThan(500);
          expect((JSON.parse(text) as { error?: { code?: unknown } }).error?.code, said).toMatch(/^[a-z_]+$/);
          expect(await recorded(), said).toEqual(before);
        }
        expect((await fetch(`${dev.url}/v1/runs?limit=1`)).status, `after ${said}`).toBe(200);
      }),
      propertyRuns('the HTTP API, invalid text', 60),
    );
    if (skipped.length) process.stdout.write(`the HTTP API: not yet checked, open bugs (OPEN_BUGS):\n  ${[...new Set(skipped.map((line) => line.slice(0, 240)))].slice(0, 6).join('\n  ')}\n  (${skipped.length} in all)\n`);
  }, 120_000);
});
