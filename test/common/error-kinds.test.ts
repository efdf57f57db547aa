import express from 'express';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { KINDS, RetryableError, SpoolError, errorOfAnswer, exitCodeOf, type ErrorKind } from '../../src/common/errors.js';
import { EXIT } from '../../src/engine/protocol.js';
import { ServerUnavailable, api } from '../../src/cli/control/http.js';
import { errorHandler } from '../../src/server/http-error.js';
import { ArtifactsUnreachableError } from '../../src/store/open.js';
import { freePort } from '../support/dev.js';

/** The one table of error kinds: what each becomes at the CLI's exit, the API's status and its wire code. */
const kinds = Object.keys(KINDS) as ErrorKind[];

/** A real HTTP server whose one route throws `error`, answered by the API's own error handler. */
async function answerTo(error: Error): Promise<{ status: number; retryAfter: string | null; body: unknown; url: string; close: () => void }> {
  const app = express();
  app.get('/v1/x', () => {
    throw error;
  });
  app.use(errorHandler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const response = await fetch(`${url}/v1/x`);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json(), url, close: () => server.close() };
}

describe('error kinds', () => {
  it('every kind has an exit code the CLI documents, an HTTP error status and a wire code no other kind has', () => {
    const exits = new Set<number>(Object.values(EXIT));
    for (const kind of kinds) {
      expect(exits.has(KINDS[kind].exit), kind).toBe(true);
      expect(KINDS[kind].exit, kind).not.toBe(EXIT.ok);
      expect(KINDS[kind].status, kind).toBeGreaterThanOrEqual(400);
      expect(KINDS[kind].status, kind).toBeLessThan(600);
      expect(KINDS[kind].wire, kind).toMatch(/^[a-z_]+$/);
    }
    expect(new Set(kinds.map((kind) => KINDS[kind].wire)).size).toBe(kinds.length);
  });

  it('the existing wire codes keep their names and exits: usage is bad_request and exit 2, unavailable exit 69, refused over_rate', () => {
    expect(KINDS.usage).toMatchObject({ wire: 'bad_request', status: 400, exit: 2 });
    expect(KINDS.unavailable).toMatchObject({ wire: 'unavailable', status: 503, exit: 69 });
    expect(KINDS.refused).toMatchObject({ wire: 'over_rate', status: 429 });
    expect(KINDS.not_found).toMatchObject({ wire: 'not_found', status: 404 });
    expect(KINDS.internal).toMatchObject({ wire: 'internal', status: 500 });
  });

  it.each(kinds)('a %s error thrown in a route is answered with its status and wire code, and the client turns that answer back into the same kind and exit', async (kind) => {
    const thrown = KINDS[kind].retryable ? new RetryableError(kind, `a ${kind} error`) : new SpoolError(kind, `a ${kind} error`);
    const answer = await answerTo(thrown);
    try {
      expect(answer.status).toBe(KINDS[kind].status);
      const wire = (answer.body as { error: { code: string } }).error.code;
      // internal is answered with an id, never the error's own words; its wire code is the kind's all the same.
      expect(wire).toBe(KINDS[kind].wire);
      const rebuilt = await api(answer.url, 'GET', '/x').then(
        () => null,
        (error: unknown) => error,
      );
      expect(rebuilt).toBeInstanceOf(SpoolError);
      expect((rebuilt as SpoolError).kind).toBe(kind);
      expect(exitCodeOf(rebuilt)).toBe(KINDS[kind].exit);
      expect(rebuilt instanceof RetryableError).toBe(KINDS[kind].retryable);
    } finally {
      answer.close();
    }
  });

  it('an answer with a wire code of its own (run_ended, bad_token) is its status\'s kind and keeps its code', () => {
    expect(errorOfAnswer(409, 'run_ended', 'm')).toMatchObject({ kind: 'conflict', code: 'run_ended' });
    expect(errorOfAnswer(401, 'bad_token', 'm')).toMatchObject({ kind: 'unauthenticated', code: 'bad_token' });
    expect(errorOfAnswer(422, 'invalid_cron', 'm')).toMatchObject({ kind: 'usage', code: 'invalid_cron' });
    expect(exitCodeOf(errorOfAnswer(422, 'invalid_cron', 'm'))).toBe(EXIT.usage);
    expect(errorOfAnswer(502, undefined, 'm')).toMatchObject({ kind: 'internal' });
  });

  it('an artifact store that does not answer is unavailable: the server answers 503 with Retry-After, the CLI exits 69', async () => {
    const error = new ArtifactsUnreachableError('--artifacts s3://b/: connect ECONNREFUSED');
    expect(error).toBeInstanceOf(RetryableError);
    expect(exitCodeOf(error)).toBe(EXIT.unavailable);
    const answer = await answerTo(error);
    answer.close();
    expect(answer).toMatchObject({ status: 503, retryAfter: '1', body: { error: { code: 'unavailable', message: '--artifacts s3://b/: connect ECONNREFUSED' } } });
  });

  it('a retryable error\'s retryAfter reaches Retry-After, in whole seconds', async () => {
    const answer = await answerTo(new RetryableError('unavailable', 'starting', { retryAfterMs: 4500 }));
    answer.close();
    expect(answer.retryAfter).toBe('5');
  });

  it('a server that does not answer is retryable, and the CLI exits 69', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const error = await api(nobody, 'GET', '/runs').then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ServerUnavailable);
    expect(error).toBeInstanceOf(RetryableError);
    expect(exitCodeOf(error)).toBe(EXIT.unavailable);
  });
});
