/** The HTTP API (docs/api.md) as the pages use it: same origin, JSON, errors with a code and a message. */

export type Phase = 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';

export const PHASES: Phase[] = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];
export const ENDED: Phase[] = ['succeeded', 'failed', 'cancelled'];

export interface Run {
  id: string;
  project: string;
  workflow: string;
  interpreter: string;
  status: Phase;
  awaiting: string | null;
  wakeAt: string | null;
  passes: number;
  error: string | null;
  input: unknown;
  outputs: Record<string, string>;
  subject: string | null;
  handler: string | null;
  parentId: string | null;
  idempotencyKey: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** A file the run stored with `spool artifact put` (docs/artifacts.md). */
export interface Artifact {
  name: string;
  size: number;
  sha256: string;
  contentType: string;
  createdAt: string;
}

export interface TimelineEntry {
  position: number;
  verb: string;
  name: string;
  occurrence: number;
  label: string | null;
  call: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  pass: number | null;
  exitCode: number | null;
  failed: boolean;
  timedOut: boolean;
  runIds: string[];
}

export interface LogLine {
  seq: number;
  pass: number;
  text: string;
  at: string;
}

export interface FormField {
  name: string;
  type: 'string' | 'number' | 'boolean';
  label: string;
  required: boolean;
  default: string | number | boolean | null;
  options: string[] | null;
}

export interface Gate {
  job: string;
  runId: string;
  state: 'waiting' | 'approved' | 'rejected' | 'timed_out' | 'cancelled' | 'failed';
  prompt: string;
  form: FormField[];
  timeoutMs: number | null;
  since: string;
  deadline: string | null;
  answeredBy: string | null;
  answeredAt: string | null;
  values: Record<string, string | number | boolean> | null;
  /** Every answer given: the first is final, later ones were refused (409) and kept. */
  answers?: { decision: 'approve' | 'reject'; by: string | null; via: string; at: string; final: boolean }[];
}

export interface Handler {
  name: string;
  eventType: string;
  workflow: string;
  interpreter: string;
}

export interface Schedule {
  name: string;
  everyMs: number | null;
  cron: string | null;
  workflow: string;
  nextAt: string;
  lastRunId: string | null;
  skipped: number;
  overlap?: 'skip' | 'allow';
}

export interface Workflow {
  name: string;
  interpreter: string;
  runs: number;
  lastRun: { id: string; status: Phase; createdAt: string };
}

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
