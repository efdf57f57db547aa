import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/** The HTTP API answers bad requests with a status that means what it says and never a raw error. */
let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

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
});
