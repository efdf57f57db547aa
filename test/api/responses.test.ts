import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/requests.js';
import { ERROR, RESPONSES } from '../../src/api/responses.js';
import { END, fileHeader, padding } from '../../src/common/bundle/ustar.js';
import { DEFAULT_MAX_VALUE_BYTES } from '../../src/engine/limits.js';
import { activityId } from '../../src/engine/verbs/activities.js';
import { createApp } from '../../src/server/app.js';
import { RemotePasses } from '../../src/server/remote-passes.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { startDev, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir } from '../support/spool.js';
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
async function call<T = Record<string, unknown>>(
  route: Route,
  params: Record<string, string> = {},
  body?: unknown,
  query = '',
  { url = dev.url, token }: { url?: string; token?: string } = {},
): Promise<{ status: number; json: T }> {
  const [method = '', template = ''] = route.split(' ');
  const path = template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const headers: Record<string, string> = {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const response = await fetch(`${url}/v1${path}${query}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T;
  expectShape(response.ok ? route : 'error', json);
  return { status: response.status, json };
}

/** A script run in a directory of its own: one submitted with no cwd runs in the server's, here the checkout. */
const script = (text: string) => ({ workflow: 'shapes.sh', interpreter: 'bash -eu', script: text, cwd: tempDir() });

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
    // A rerun from a step: it names its source (rerunOf), and the old run lists it (reruns).
    const rerun = await call<{ run: { id: string } }>('POST /runs/:id/rerun', { id }, { fromStep: 'one' });
    expect(rerun.status).toBe(201);
    await call('GET /runs/:id', { id: rerun.json.run.id });
    expect((await call<{ run: { reruns: string[] } }>('GET /runs/:id', { id })).json.run.reruns).toEqual([rerun.json.run.id]);
    const logs = await call<{ logs: unknown[] }>('GET /runs/:id/logs', { id });
    expect(logs.json.logs.length).toBeGreaterThan(0);
    await call('GET /runs/:id/journal', { id });
    await call('GET /runs/:id/timeline', { id });
    const artifacts = await call<{ artifacts: unknown[] }>('GET /runs/:id/artifacts', { id });
    expect(artifacts.json.artifacts.length).toBe(1);
    await call('GET /runs/:id/approvals', { id });
    await call('GET /runs/:id/shape', { id });
    await call('POST /runs/:id/cancel', { id }, {});
    await call('GET /workflows');
    // The last day by default, in hours from a whole hour; the runs this test made were created in its last hour.
    const stats = await call<{ since: string; buckets: { counts: { succeeded: number } }[]; bucketMs: number; durations: { runs: number } | null }>('GET /workflows/:name/stats', { name: 'shapes.sh' });
    expect(stats.json.bucketMs).toBe(3_600_000);
    expect(stats.json.since).toMatch(/T\d\d:00:00\.000Z$/);
    expect(stats.json.buckets.length).toBeGreaterThanOrEqual(24);
    expect(stats.json.buckets.length).toBeLessThanOrEqual(25);
    expect(stats.json.buckets.at(-1)?.counts.succeeded).toBeGreaterThan(0);
    expect(stats.json.durations?.runs).toBeGreaterThan(0);
    const backwards = await call<{ error: { message: string } }>('GET /workflows/:name/stats', { name: 'shapes.sh' }, undefined, '?since=2026-12-06&until=2026-12-05');
    expect([backwards.status, backwards.json.error.message]).toEqual([400, "'since' (2026-12-06T00:00:00.000Z) must be before 'until' (2026-12-05T00:00:00.000Z)"]);
    expect((await call('GET /workflows/:name/stats', { name: 'shapes.sh' }, undefined, '?since=2020-01-01&until=2026-01-01')).status).toBe(400);
    expect((await call<{ form: unknown }>('GET /workflows/:name', { name: 'shapes.sh' })).json.form).toBeNull();
    // A graph's typed inputs make its start form.
    const graph = { workflow: 'shapes-graph.yaml', interpreter: 'graph', script: 'input:\n  n: { type: number, min: 1, required: true }\nnodes:\n  - { id: a, type: sleep, config: { duration: 1ms } }\n' };
    expect((await call('POST /runs', {}, { ...graph, input: { n: 2 } })).status).toBe(201);
    const started = await call<{ form: { name: string; type: string; min: number }[] }>('GET /workflows/:name', { name: 'shapes-graph.yaml' });
    expect(started.json.form).toEqual([{ name: 'n', type: 'number', label: 'n', required: true, default: null, options: null, min: 1, max: null }]);
    expect((await call('GET /workflows/:name', { name: 'no-such.sh' })).status).toBe(404);
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
    await call('GET /runs/:id/shape', { id });
    const { json: waiting } = await call<{ approvals: { gate: { form: unknown[] } }[] }>('GET /approvals/waiting');
    expect(waiting.approvals.map((each) => each.gate.form.length)).toEqual([2]);
    await call('POST /runs/:id/approvals/:job', { id, job: 'ask' }, { decision: 'approve', values: { amount: 7, reason: 'late' }, via: 'api' });
    expect((await call('POST /runs/:id/approvals/:job', { id, job: 'ask' }, { decision: 'reject' })).status).toBe(409);
    const { json: approvals } = await call<{ approvals: { answers: unknown[]; form: unknown[] }[] }>('GET /runs/:id/approvals', { id });
    expect(approvals.approvals[0]?.answers.length).toBe(2);
    expect(approvals.approvals[0]?.form.length).toBe(2);
    await waitForRun(dev.url, id);
    await call('GET /runs/:id/timeline', { id });
  });

  it('given a gate with approvers, then its approvals and a counted answer answer their shapes (issue 33, item 11)', async () => {
    // Made in the store, so no one submitted it and the user running the tests may approve.
    const id = `dev:default:run-${'a'.repeat(16)}`;
    const me = userInfo().username;
    const script = `name: two\njobs:\n  ask:\n    approval:\n      prompt: ok?\n      approvers: {count: 2, from: [${JSON.stringify(me)}, "group:ops"]}\n`;
    await dev.store.createRun({ id, project: 'default', workflow: 'two.yaml', interpreter: 'pipeline', script });
    await waitForChild(dev, id, 'ask', ['waiting']);
    const { json } = await call<{ approvals: { counted: number } }>('POST /runs/:id/approvals/:job', { id, job: 'ask' }, { decision: 'approve' });
    expect(json.approvals.counted).toBe(1);
    const { json: gates } = await call<{ approvals: { approvers: unknown }[] }>('GET /runs/:id/approvals', { id });
    expect(gates.approvals[0]?.approvers).toEqual({ count: 2, from: [me, 'group:ops'] });
    // Counted, the gate waits for another: not for the one who answered.
    const { json: waiting } = await call<{ approvals: unknown[] }>('GET /approvals/waiting');
    expect(waiting.approvals).toEqual([]);
  });

  it('given events, handlers, schedules and state, then their routes answer their shapes', async () => {
    await call('PUT /handlers/:name', { name: 'shaped' }, { eventType: 'shape.made', ...script('true') });
    await call('GET /handlers');
    const event = await call<{ runs: string[] }>('POST /events', {}, { type: 'shape.made', subject: 'one', payload: { n: 1 } });
    expect(event.json.runs.length).toBe(1);
    const events = await call<{ events: { run: unknown }[] }>('GET /handlers/:name/events', { name: 'shaped' }, undefined, '?limit=5');
    expect(events.json.events[0]?.run).not.toBeNull();
    await call('DELETE /handlers/:name', { name: 'shaped' });
    await call('PUT /schedules/:name', { name: 'every' }, { everyMs: 3_600_000, ...script('true') });
    await call('PUT /schedules/:name', { name: 'cron' }, { cron: '0 3 * * *', ...script('true') });
    await call('POST /schedules/:name/trigger', { name: 'every' }, {});
    const suspended = await call<{ schedule: { nextAt: unknown } }>('POST /schedules/:name/suspend', { name: 'every' }, {});
    expect(suspended.json.schedule.nextAt).toBeNull();
    const { json: listed } = await call<{ schedules: { recentRuns: unknown[] }[] }>('GET /schedules');
    expect(listed.schedules.some((each) => each.recentRuns.length === 1)).toBe(true);
    await call('POST /schedules/:name/resume', { name: 'every' }, {});
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

});

/**
 * The agents' routes, which the operator serves to its pods: the same app over a real store, with
 * the pod's token checked by a stand-in for the cluster's TokenReview (the one part not here).
 */
describe("the agents' answers are the shapes src/api/responses.ts declares", { timeout: 120_000 }, () => {
  let store: Store;
  let server: Server;
  let url: string;
  const runId = 'test:default:run-agentshapes00000';
  beforeAll(async () => {
    store = await openStore({ dataDir: join(tempDir('spool-agent-shapes-'), 'data') });
    await store.createRun({ id: runId, project: 'default', workflow: 'agent.sh', interpreter: 'bash -eu', script: 'true', input: { a: 1 } });
    const run = (await store.startPass(runId))?.run;
    if (!run) throw new Error('the run did not start a pass');
    const passes = new RemotePasses();
    await passes.start(store, run, { now: () => new Date(), capabilities: [], maxResultBytes: DEFAULT_MAX_VALUE_BYTES, env: 'test', notify: () => {} });
    await store.createActivity({ id: activityId(runId, 'build'), runId, name: 'build', argv: ['true'], cwd: null, requires: [], maxAttempts: 1, backoffMs: 0, retryOnExit: null });
    expect((await store.claimActivity([], new Date()))?.attempt).toBe(1);
    const app = createApp({
      store,
      env: 'test',
      defaultProject: 'default',
      now: () => new Date(),
      poke: () => {},
      abortPass: () => {},
      agents: {
        passes,
        authenticate: (token) => Promise.resolve(token === 'pass-token' ? { runId, pass: run.passes } : null),
        warmPods: {
          wait: (token) => Promise.resolve(token === 'warm-token' ? { assignment: { runId, pass: run.passes } } : token === 'idle-token' ? { assignment: null } : null),
        },
        activities: {
          authenticate: (token) => Promise.resolve(token === 'attempt-token' ? { runId, name: 'build', attempt: 1 } : null),
          reported: () => {},
        },
      },
    });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await store?.close();
  });

  it("given a pass under way on a pod, then its agent's calls answer their shapes", async () => {
    const pass = { run: runId, pass: '1' };
    const agent = { url, token: 'pass-token' };
    await call('GET /agent/runs/:run/passes/:pass', pass, undefined, '', agent);
    const answer = await call<{ status: string }>('POST /agent/runs/:run/passes/:pass/calls', pass, { verb: 'output.set', key: 'k', value: 'v' }, '', agent);
    expect(answer.json.status).toBe('ok');
    await call('POST /agent/runs/:run/passes/:pass/logs', pass, { text: 'hello\n' }, '', agent);
    await call('POST /agent/runs/:run/passes/:pass/exit', pass, { code: 0, signal: null }, '', agent);
    expect((await call('GET /agent/runs/:run/passes/:pass', pass, undefined, '', { url })).status).toBe(401);
  });

  it("given a warm pod's agent asking for its pass, then the answer is its shape, assigned or not yet", async () => {
    // Its pass's script comes with it: the agent asks for nothing more before the script starts.
    expect((await call<{ assignment: unknown }>('GET /agent/assignment', {}, undefined, '', { url, token: 'warm-token' })).json.assignment).toEqual({
      run: runId,
      pass: 1,
      spec: { run: runId, pass: 1, filename: 'agent.sh', interpreter: 'bash -eu', script: 'true', input: expect.objectContaining({ input: { a: 1 } }) as unknown },
    });
    expect((await call<{ assignment: unknown }>('GET /agent/assignment', {}, undefined, '', { url, token: 'idle-token' })).json.assignment).toBeNull();
    expect((await call('GET /agent/assignment', {}, undefined, '', { url, token: 'pass-token' })).status).toBe(401);
  });

  it("given an activity's attempt running on a pod, then its report of a failure answers its shape and keeps its stderr tail", async () => {
    const attempt = { run: runId, name: 'build', attempt: '1' };
    const report = { stdout: 'built', exitCode: 2, stderrTail: 'bad \uFFFD input\nno account 42' };
    const { status } = await call('POST /agent/runs/:run/activities/:name/attempts/:attempt', attempt, report, '', { url, token: 'attempt-token' });
    expect(status).toBe(200);
    expect((await store.getActivity(activityId(runId, 'build')))?.result).toEqual({ stdout: 'built', exitCode: 2, attempts: 1, stderrTail: 'bad \uFFFD input\nno account 42' });
  });
});

describe('every route', () => {
  it('has a schema for its answer, and every JSON answer was checked against its schema above', () => {
    const routes = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(Object.keys(RESPONSES).sort()).toEqual([...routes, 'POST /checkouts'].sort());
    // The artifact download answers bytes.
    const json = Object.keys(RESPONSES).filter((route) => route !== 'GET /runs/:id/artifacts/:name');
    expect(json.filter((route) => !checked.has(route))).toEqual([]);
    expect(checked.has('error')).toBe(true);
  });
});
