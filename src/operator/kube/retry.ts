import { Backoff, sleep } from './backoff.js';
import { httpStatus } from './request-options.js';

/**
 * Whether a failed API call may well succeed if made again: the API server never answered (it is
 * restarting, or the connection was reset), or answered "not now" (429, 5xx, 408). A 403 counts
 * too: a restarted API server refuses until its RBAC caches have filled, and this operator's own
 * rights are the install's, never the user's.
 */
export function isTransient(error: unknown): boolean {
  const status = httpStatus(error);
  if (status !== undefined) return status === 403 || status === 408 || status === 429 || status >= 500;
  // client-node's fetch: a FetchError for a refused, reset or prematurely closed connection.
  return error instanceof Error && (error.name === 'FetchError' || error.name === 'AbortError');
}

/**
 * `call`, made again with backoff while it fails transiently, for up to `forMs`; the last error is
 * thrown once that is spent, at once for any other error, and when `signal` aborts.
 */
export async function retryTransient<T>(call: () => Promise<T>, signal: AbortSignal, forMs = 120_000): Promise<T> {
  const deadline = Date.now() + forMs;
  const backoff = new Backoff({ initialMs: 250, maxMs: 10_000 });
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const delay = backoff.next();
      if (!isTransient(error) || signal.aborted || Date.now() + delay > deadline) throw error;
      await sleep(delay, signal);
      if (signal.aborted) throw error;
    }
  }
}
