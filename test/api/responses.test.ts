import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/requests.js';
import { ERROR, RESPONSES } from '../../src/api/responses.js';
import { END, fileHeader, padding } from '../../src/common/bundle/ustar.js';
import { startDev, waitForRun } from '../support/dev.js';
import { removeTempDirs } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/**
 * The server's real answers, route by route, against the schemas of src/api/responses.ts: every
 * object there is closed and lists every field it always has, so a route that adds, drops or
 * retypes a field fails here (and its docs/api.md row, written from the same schema, would be
 * wrong). Each route is called with what makes its answer full: a run with a log, an artifact and
 * outputs; a gate with a form, answered twice; a queued signal; handlers, schedules, state.
 */

type Route = keyof typeof RESPONSES;
const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
const validators = new Map<string, ValidateFunction>(
  Object.entries({ ...RESPONSES, error: ERROR }).map(([route, schema]) => [route, ajv.compile(schema)]),
);
const checked = new Set<string>();

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** Which schema the answer is held to: the route's, or the error shape for a refusal. */
function expectShape(route: Route | 'error', body: unknown): void {
  const validate = validators.get(route);
  if (!validate) throw new Error(`no schema for ${route}`);
  expect(validate(body), `${route}: ${ajv.errorsText(validate.errors)} ${JSON.stringify(validate.errors?.map((error) => error.params))} in ${JSON.stringify(body).slice(0, 2000)}`).toBe(true);
  checked.add(route);
}

/** Calls `route` with its parameters filled in; holds a 2xx answer to the route's schema, any other to the error shape. */
async function call<T = Record<string, unknown>>(route: Route, params: Record<string, string> = {}, body?: unknown, query = ''): Promise<{ status: number; json: T }> {
  const [method = '', template = ''] = route.split(' ');
  const path = template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const response = await fetch(`${dev.url}/v1${path}${query}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T;
  expectShape(response.ok ? route : 'error', json);
  return { status: response.status, json };
}

const script = (text: string) => ({ workflow: 'shapes.sh', interpreter: 'bash -eu', script: text });

const GATE = `name: shapes-gate
jobs:
  ask:
    approval:
      prompt: "Ship it?"
      timeout: 1h
      form:
        amount:
          type: number
          label: Amount
          required: true
          default: 5
        reason:
          type: string
          options: [late, other]
  after:
    depends_on: [ask]
    steps:
      - name: done
        run: echo done
`;

describe("the API's answers are the shapes src/api/responses.ts declares", { timeout: 120_000 }, () => {
  it('given a run that logged, stored an artifact and set an output, then the run routes answer their shapes', async () => {
    const submitted = await call<{ run: { id: string } }>('POST /runs', {}, {
      ...script('echo to the log\nspool step one -- echo hi\nprintf x > f\nspool artifact put out.txt f\nspool annotate shaped\nspool output set k v\n'),
      input: { order: 1 },
      idempotencyKey: 'shapes-1',
    });
    expect(submitted.status).toBe(201);
    const id = submitted.json.run.id;
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    expect((await call('POST /runs', {}, { ...script('true'), idempotencyKey: 'shapes-1' })).status).toBe(200);
    await call('GET /runs', {}, undefined, '?limit=1');
    await call('GET /runs/:id', { id });
    const logs = await call<{ logs: unknown[] }>('GET /runs/:id/logs', { id });
    expect(logs.json.logs.length).toBeGreaterThan(0);
    await call('GET /runs/:id/journal', { id });
    await call('GET /runs/:id/timeline', { id });
    const artifacts = await call<{ artifacts: unknown[] }>('GET /runs/:id/artifacts', { id });
    expect(artifacts.json.artifacts.length).toBe(1);
    await call('GET /runs/:id/approvals', { id });
    await call('POST /runs/:id/cancel', { id }, {});
    await call('GET /workflows');
    expect((await call('GET /runs/:id', { id: 'dev:default:run-0000000000000000' })).status).toBe(404);
  });

  it('given a run waiting for a signal, then a signal is queued and the cancelled run answers its shape', async () => {
    const { json } = await call<{ run: { id: string } }>('POST /runs', {}, script('spool wait signal go\n'));
    const id = json.run.id;
    await waitForRun(dev.url, id, ['waiting']);
    await call('GET /runs', {}, undefined, '?status=waiting');
    expect((await call('POST /runs/:id/signals', { id }, { name: 'other', payload: { a: 1 } })).status).toBe(202);
    await call('POST /runs/:id/cancel', { id }, {});
  });

  it('given a gate with a form, answered and then answered again, then the approvals answer their shapes', async () => {
    const { json } = await call<{ run: { id: string } }>('POST /runs', {}, { workflow: 'gate.yaml', interpreter: 'pipeline', script: GATE });
    const id = json.run.id;
    await waitForChild(dev, id, 'ask', ['waiting']);
    await call('GET /runs/:id/approvals', { id });
    await call('POST /runs/:id/approvals/:job', { id, job: 'ask' }, { decision: 'approve', values: { amount: 7, reason: 'late' }, via: 'api' });
    expect((await call('POST /runs/:id/approvals/:job', { id, job: 'ask' }, { decision: 'reject' })).status).toBe(409);
    const { json: approvals } = await call<{ approvals: { answers: unknown[]; form: unknown[] }[] }>('GET /runs/:id/approvals', { id });
    expect(approvals.approvals[0]?.answers.length).toBe(2);
    expect(approvals.approvals[0]?.form.length).toBe(2);
    await waitForRun(dev.url, id);
    await call('GET /runs/:id/timeline', { id });
  });

  it('given events, handlers, schedules and state, then their routes answer their shapes', async () => {
    await call('PUT /handlers/:name', { name: 'shaped' }, { eventType: 'shape.made', ...script('true') });
    await call('GET /handlers');
    const event = await call<{ runs: string[] }>('POST /events', {}, { type: 'shape.made', subject: 'one', payload: { n: 1 } });
    expect(event.json.runs.length).toBe(1);
    await call('DELETE /handlers/:name', { name: 'shaped' });
    await call('PUT /schedules/:name', { name: 'every' }, { everyMs: 3_600_000, ...script('true') });
    await call('PUT /schedules/:name', { name: 'cron' }, { cron: '0 3 * * *', ...script('true') });
    await call('POST /schedules/:name/trigger', { name: 'every' }, {});
    await call('GET /schedules');
    await call('DELETE /schedules/:name', { name: 'every' });
    await call('PUT /state/:entity/:key', { entity: 'shapes', key: 'k' }, { value: 'v' });
    await call('GET /state/:entity', { entity: 'shapes' });
    await call('GET /state/:entity/:key', { entity: 'shapes', key: 'k' });
    await call('DELETE /state/:entity/:key', { entity: 'shapes', key: 'k' });
  });

  it('given a checkout bundle, then the upload answers its shape', async () => {
    const tar = Buffer.concat([fileHeader('a.txt', 2, false), Buffer.from('hi'), padding(2), END]);
    const response = await fetch(`${dev.url}/v1/checkouts`, { method: 'POST', headers: { 'content-type': 'application/x-tar' }, body: tar });
    expect(response.status).toBe(201);
    expectShape('POST /checkouts', await response.json());
  });

  it('every JSON route of the table has a schema, and every schema of a route served here was checked against an answer', () => {
    const routes = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(Object.keys(RESPONSES).sort()).toEqual([...routes, 'POST /checkouts'].sort());
    // The artifact download answers bytes; the agents' routes are served by the operator alone.
    const served = Object.keys(RESPONSES).filter((route) => route !== 'GET /runs/:id/artifacts/:name' && !route.includes('/agent/'));
    expect(served.filter((route) => !checked.has(route))).toEqual([]);
    expect(checked.has('error')).toBe(true);
  });
});
