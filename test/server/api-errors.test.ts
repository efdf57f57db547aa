import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useDevServer, submit, waitForRun } from '../support/dev.js';
import { tempDir, writeFiles } from '../support/spool.js';

/** The HTTP API answers bad requests with a status that means what it says and never a raw error. */
const dev = useDevServer();

const call = async (path: string, init: RequestInit = {}): Promise<{ status: number; error: { code: string; message: string } }> => {
  const response = await fetch(`${dev.url}/v1${path}`, init);
  return { status: response.status, ...((await response.json()) as { error: { code: string; message: string } }) };
};

describe('the HTTP API at its boundary', () => {
  it('given a signal to a run that has ended, then 409 (not "queued"), and spool signal says so and fails', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'quick.sh': 'spool step only -- true\n' });
    const id = await submit(dev.url, dir, 'quick.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    const answer = await call(`/runs/${encodeURIComponent(id)}/signals`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"go"}' });
    expect(answer).toEqual({ status: 409, error: { code: 'run_ended', message: `run ${id} has ended (succeeded); a signal would never be taken` } });
    const signalled = await cli(dev.url, dir, ['signal', id, 'go']);
    expect(signalled.code).not.toBe(0);
    expect(signalled.output).toContain('has ended (succeeded)');
  });

  it('given a body that is not JSON by its type, then 415; one over the size limit, then 413', async () => {
    const plain = await call('/runs', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(plain.status).toBe(415);
    expect(plain.error.code).toBe('unsupported_media_type');
    const huge = await call('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ script: 'x'.repeat(6 * 1024 * 1024) }) });
    expect(huge).toEqual({ status: 413, error: { code: 'too_large', message: 'the request body is over the 5mb limit' } });
  });

  it.each(['-5', '1.5', 'abc', '100000'])('given ?limit=%s, then 400 naming it (not a database error)', async (limit) => {
    const answer = await call(`/runs?limit=${limit}`);
    expect(answer.status).toBe(400);
    expect(answer.error.message).toBe(`'limit' must be a whole number from 1 to 1000, not '${limit}'`);
  });

  /** A request with headers fetch will not let a caller set (Host). */
  const raw = (method: string, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; code: string }> =>
    new Promise((resolve, reject) => {
      const req = request(`${dev.url}/v1${path}`, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, code: text ? ((JSON.parse(text) as { error?: { code: string } }).error?.code ?? 'ok') : 'ok' }));
      });
      req.once('error', reject);
      req.end(body);
    });

  it('given a Host that is not a loopback name (DNS rebinding), then 403; given a cross-origin page changing something, then 403', async () => {
    expect(await raw('GET', '/runs', { host: 'attacker.example:7456' })).toEqual({ status: 403, code: 'forbidden_host' });
    expect((await raw('GET', '/runs', { host: 'localhost:7456' })).status).toBe(200);
    const submitBody = JSON.stringify({ workflow: 'x.sh', interpreter: 'bash -eu', script: 'true' });
    expect(await raw('POST', '/runs', { host: '127.0.0.1', origin: 'https://attacker.example', 'content-type': 'application/json' }, submitBody)).toEqual({ status: 403, code: 'forbidden_origin' });
    expect((await raw('POST', '/runs', { host: '127.0.0.1', origin: 'http://localhost:3000', 'content-type': 'application/json' }, submitBody)).status).toBe(201);
  });

  it('given a cwd the server would have to make, then 400 and nothing is made', async () => {
    const missing = join(tempDir(), 'no', 'such', 'dir');
    const answer = await call('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow: 'x.sh', interpreter: 'bash -eu', script: 'true', cwd: missing }) });
    expect(answer).toEqual({ status: 400, error: { code: 'bad_request', message: `'cwd' must be an existing directory, as an absolute path, not '${missing}'` } });
    expect(existsSync(missing)).toBe(false);
  });
});
