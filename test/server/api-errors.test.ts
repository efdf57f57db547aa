import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useDevServer, submit, waitForRun } from '../support/dev.js';
import { tempDir, writeFiles } from '../support/spool.js';

/** The HTTP API answers bad requests with a status that means what it says and never a raw error. */
const dev = useDevServer();

const call = async (
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; error: { code: string; message: string } }> => {
  const response = await fetch(`${dev.url}/v1${path}`, init);
  return { status: response.status, ...((await response.json()) as { error: { code: string; message: string } }) };
};

describe('the HTTP API at its boundary', () => {
  it('given a signal to a run that has ended, then 409 (not "queued"), and spool signal says so and fails', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'quick.sh': 'spool step only -- true\n' });
    const id = await submit(dev.url, dir, 'quick.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    const answer = await call(`/runs/${encodeURIComponent(id)}/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"go"}',
    });
    expect(answer).toEqual({
      status: 409,
      error: { code: 'run_ended', message: `run ${id} has ended (succeeded); a signal would never be taken` },
    });
    const signalled = await cli(dev.url, dir, ['signal', id, 'go']);
    expect(signalled.code).not.toBe(0);
    expect(signalled.output).toContain('has ended (succeeded)');
  });

  it('given a body that is not JSON by its type, then 415; one over the size limit, then 413', async () => {
    const plain = await call('/runs', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(plain.status).toBe(415);
    expect(plain.error.code).toBe('unsupported_media_type');
    const huge = await call('/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ script: 'x'.repeat(6 * 1024 * 1024) }),
    });
    expect(huge).toEqual({
      status: 413,
      error: { code: 'too_large', message: 'the request body is over the 5mb limit' },
    });
  });

  it.each(['-5', '1.5', 'abc', '100000'])(
    'given ?limit=%s, then 400 naming it (not a database error)',
    async (limit) => {
      const answer = await call(`/runs?limit=${limit}`);
      expect(answer.status).toBe(400);
      expect(answer.error.message).toBe(`'limit' must be a whole number from 1 to 1000, not '${limit}'`);
    },
  );

  const post = (path: string, body: unknown, method = 'POST') =>
    call(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const script = { workflow: 'x.sh', interpreter: 'bash -eu', script: 'true' };

  it.each([
    ['an unknown key', { ...script, inputs: { a: 1 } }, "'inputs' is not a field of POST /v1/runs"],
    ['a wrong type', { ...script, lenient: 'yes' }, "'lenient' must be boolean"],
    [
      'an unknown interpreter',
      { ...script, interpreter: 'perl' },
      `'interpreter' must be one of "bash -eu", "python3", "node", "pipeline", "graph"`,
    ],
    [
      'a period past any date',
      { ...script, throttle: { limit: 1, periodMs: 1e300, key: 'k' } },
      "'throttle.periodMs' must be at most 3155760000000",
    ],
    [
      'a project with a newline',
      { ...script, project: 'a/b\nc' },
      "'project' is not a project name: 1 to 63 letters, digits, '.', '_' or '-', starting and ending with a letter or a digit",
    ],
    ['a missing script', { workflow: 'x.sh', interpreter: 'bash -eu' }, "'script' is missing"],
  ])('given a submit with %s, then 400 naming the field, and no run is made', async (_, body, message) => {
    const before = ((await (await fetch(`${dev.url}/v1/runs?limit=1000`)).json()) as { runs: unknown[] }).runs.length;
    expect(await post('/runs', body)).toEqual({ status: 400, error: { code: 'bad_request', message } });
    const after = ((await (await fetch(`${dev.url}/v1/runs?limit=1000`)).json()) as { runs: unknown[] }).runs.length;
    expect(after).toBe(before);
  });

  it('given a cron that does not parse or a pipeline document with an error, then 422 naming it, and nothing is kept', async () => {
    const schedule = await post('/schedules/nightly', { ...script, cron: '61 * * * *' }, 'PUT');
    expect(schedule.status).toBe(422);
    expect(schedule.error.code).toBe('invalid_cron');
    expect(schedule.error.message).toMatch(/^bad cron expression '61 \* \* \* \*'/);
    expect((await call('/schedules')) as unknown).toMatchObject({ status: 200 });
    const pipeline = await post('/runs', {
      workflow: 'p.yaml',
      interpreter: 'pipeline',
      script: 'name: p\njobs:\n  a:\n    rnu: echo hi\n',
    });
    expect(pipeline.status).toBe(422);
    expect(pipeline.error.code).toBe('invalid_pipeline');
    expect(pipeline.error.message).toMatch(/^p\.yaml:4:5: /);
  });

  it("given project in any route's query or body (the cluster CLI sends the namespace with every request), then it is taken", async () => {
    const { run } = (await (
      await fetch(`${dev.url}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...script, project: 'default' }),
      })
    ).json()) as { run: { id: string } };
    const path = `/runs/${encodeURIComponent(run.id)}`;
    expect((await fetch(`${dev.url}/v1${path}/logs?project=default`)).status).toBe(200);
    expect((await fetch(`${dev.url}/v1${path}/journal?project=default`)).status).toBe(200);
    expect((await post(`${path}/cancel`, { project: 'default' })).status).toBe(200);
  });

  it('given an unknown query parameter or one out of bounds, then 400 naming it', async () => {
    expect(await call('/runs?statu=failed')).toEqual({
      status: 400,
      error: { code: 'bad_request', message: "query: 'statu' is not a field of GET /v1/runs" },
    });
    const { run } = (await (
      await fetch(`${dev.url}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(script),
      })
    ).json()) as { run: { id: string } };
    expect(await call(`/runs/${encodeURIComponent(run.id)}/logs?after=-1e309`)).toMatchObject({
      status: 400,
      error: { message: "'after' must be a whole number from 0 to 9007199254740991, not '-1e309'" },
    });
  });

  it('given a path parameter with a NUL or a bad escape, then 400 (not a database error)', async () => {
    expect(await call('/runs/a%00b')).toEqual({
      status: 400,
      error: {
        code: 'bad_request',
        message: "'id' in the path must not contain control characters (a newline, a tab...)",
      },
    });
    expect((await call('/runs/a%E0%A4%A')).status).toBe(400);
    expect((await call(`/handlers/${'h'.repeat(300)}`, { method: 'DELETE' })).error.message).toBe(
      "'name' in the path is longer than 256 characters",
    );
  });

  it('given a method a path does not take, then 405 with Allow', async () => {
    const response = await fetch(`${dev.url}/v1/runs`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST, GET');
    expect(await response.json()).toEqual({
      error: { code: 'method_not_allowed', message: 'DELETE is not allowed on /v1/runs; use POST or GET' },
    });
    expect((await call('/no-such-thing')).status).toBe(404);
  });

  it('given a signal payload, an event payload or a cell value over the recorded-value limit, then 413 and nothing is kept', async () => {
    process.env.SPOOL_MAX_RESULT_BYTES = '1000';
    try {
      const big = 'x'.repeat(2000);
      const event = await post('/events', { type: 'big.one', payload: { big } });
      expect(event).toEqual({
        status: 413,
        error: {
          code: 'too_large',
          message:
            "'payload' is 2010 bytes, over the 1000-byte limit for a recorded value; keep it in a file or a store of its own and record its path or an id instead",
        },
      });
      expect((await post('/state/e/k', { value: big }, 'PUT')).status).toBe(413);
      expect((await call('/state/e/k')).status).toBe(404);
    } finally {
      delete process.env.SPOOL_MAX_RESULT_BYTES;
    }
  });

  /** A request with headers fetch will not let a caller set (Host). */
  const raw = (
    method: string,
    path: string,
    headers: Record<string, string>,
    body = '',
  ): Promise<{ status: number; code: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        `${dev.url}/v1${path}`,
        { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              code: text ? ((JSON.parse(text) as { error?: { code: string } }).error?.code ?? 'ok') : 'ok',
            }),
          );
        },
      );
      req.once('error', reject);
      req.end(body);
    });

  it('given a Host that is not a loopback name (DNS rebinding), then 403; given a cross-origin page changing something, then 403', async () => {
    expect(await raw('GET', '/runs', { host: 'attacker.example:7456' })).toEqual({
      status: 403,
      code: 'forbidden_host',
    });
    expect((await raw('GET', '/runs', { host: 'localhost:7456' })).status).toBe(200);
    const submitBody = JSON.stringify({ workflow: 'x.sh', interpreter: 'bash -eu', script: 'true' });
    expect(
      await raw(
        'POST',
        '/runs',
        { host: '127.0.0.1', origin: 'https://attacker.example', 'content-type': 'application/json' },
        submitBody,
      ),
    ).toEqual({ status: 403, code: 'forbidden_origin' });
    // An origin is scheme, host and port: a page of another local port is another site (issue 28, bug 9).
    expect(
      await raw('POST', '/runs', { host: '127.0.0.1:7456', origin: 'http://localhost:3000', 'content-type': 'application/json' }, submitBody),
    ).toEqual({ status: 403, code: 'forbidden_origin' });
    expect(await raw('POST', '/runs/x/cancel', { host: '127.0.0.1:7456', origin: 'http://127.0.0.1:8080', 'content-type': 'text/plain' }, '')).toEqual({
      status: 403,
      code: 'forbidden_origin',
    });
    expect(
      await raw('POST', '/runs', { host: '127.0.0.1:7456', origin: 'https://127.0.0.1:7456', 'content-type': 'application/json' }, submitBody),
    ).toEqual({ status: 403, code: 'forbidden_origin' });
    expect(
      (await raw('POST', '/runs', { host: '127.0.0.1:7456', origin: 'http://localhost:7456', 'content-type': 'application/json' }, submitBody)).status,
    ).toBe(201);
  });

  it('given a cwd the server would have to make, then 400 and nothing is made', async () => {
    const missing = join(tempDir(), 'no', 'such', 'dir');
    const answer = await call('/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'x.sh', interpreter: 'bash -eu', script: 'true', cwd: missing }),
    });
    expect(answer).toEqual({
      status: 400,
      error: {
        code: 'bad_request',
        message: `'cwd' must be an existing directory, as an absolute path, not '${missing}'`,
      },
    });
    expect(existsSync(missing)).toBe(false);
  });
});
