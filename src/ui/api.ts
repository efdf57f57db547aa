/** The HTTP API (docs/api.md) as the pages use it: same origin, JSON, errors with a code and a message. */

import type { RunStatus } from '../api/responses.js';

// The API's shapes are declared once, in src/api/responses.ts; types only, so the bundle takes none of it.
export type { Artifact, FormField, Gate, LogLine, ResponseOf, Run, RunShape, RunSort, ShapeVertex, TimelineEntry } from '../api/responses.js';
export type Phase = RunStatus;

export const PHASES: readonly Phase[] = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];
export const ENDED: readonly Phase[] = ['succeeded', 'failed', 'cancelled'];

/** An answer the API refused, or a server that could not be reached (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/v1${path}`, {
      method,
      headers: body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, 'unreachable', 'The server cannot be reached. Is `spool dev` (or `spool ui`) still running?');
  }
  const answer = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!response.ok) {
    const error = answer?.error;
    throw new ApiError(response.status, error?.code ?? 'http', error?.message ?? `the server answered ${response.status} ${response.statusText}`);
  }
  return answer as T;
}

export const runPath = (id: string): string => `/runs/${encodeURIComponent(id)}`;

export const api = {
  get: <T>(path: string): Promise<T> => request<T>('GET', path),
  post: <T>(path: string, body: unknown = {}): Promise<T> => request<T>('POST', path, body),
};
