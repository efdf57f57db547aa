import { RetryableError, errorOfAnswer } from '../../common/errors.js';
import type { ErrorAnswer } from '../../api/responses.js';
import { ACT_AS_HEADER } from '../../api/act-as.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:7456';

/** No server answered: retryable, as it may be starting; the CLI exits with the unavailable code. */
export class ServerUnavailable extends RetryableError {
  constructor(url: string, reason: string) {
    super('unavailable', `cannot reach the server at ${url} (${reason}); start one with 'spool dev' or set SPOOL_SERVER`);
  }
}

export function serverUrl(option?: string): string {
  return (option ?? process.env.SPOOL_SERVER ?? DEFAULT_SERVER).replace(/\/+$/, '');
}


/** One call to the HTTP API; an error answer becomes a SpoolError with the server's message. */
export async function api<T = Record<string, unknown>>(
  server: string,
  method: string,
  path: string,
  body?: unknown,
  as?: string,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${server}/v1${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(as === undefined ? {} : { [ACT_AS_HEADER]: as }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ServerUnavailable(server, cause?.code ?? cause?.message ?? (error as Error).message);
  }
  const answer = (await response.json().catch(() => ({}))) as Partial<ErrorAnswer>;
  // Rebuilt through the table of kinds: a 400 or 422 is the person's to fix (exit 2), a 503 may pass (exit 69).
  if (!response.ok) throw errorOfAnswer(response.status, answer.error?.code, answer.error?.message ?? `the server answered ${response.status}`);
  return answer as T;
}

export const runPath = (id: string): string => `/runs/${encodeURIComponent(id)}`;
