import { EXIT } from './exit-codes.js';

/**
 * Every kind of error, declared once with what it becomes at each edge: the CLI's exit code, the
 * HTTP status and the wire code the API answers with (`{"error": {"code", "message"}}`). A route
 * may answer a more precise wire code of the same kind (`run_ended` is a `conflict`); the client
 * turns an answer back into its kind by its wire code, else by its status. Wire codes are what
 * the SDKs parse: never rename one.
 */
export const KINDS = {
  usage: { exit: EXIT.usage, status: 400, wire: 'bad_request', retryable: false },
  not_found: { exit: EXIT.failure, status: 404, wire: 'not_found', retryable: false },
  conflict: { exit: EXIT.failure, status: 409, wire: 'conflict', retryable: false },
  limit: { exit: EXIT.failure, status: 413, wire: 'too_large', retryable: false },
  refused: { exit: EXIT.failure, status: 429, wire: 'over_rate', retryable: false },
  unauthenticated: { exit: EXIT.failure, status: 401, wire: 'unauthenticated', retryable: false },
  forbidden: { exit: EXIT.failure, status: 403, wire: 'forbidden', retryable: false },
  unavailable: { exit: EXIT.unavailable, status: 503, wire: 'unavailable', retryable: true },
  internal: { exit: EXIT.failure, status: 500, wire: 'internal', retryable: false },
  // A script that diverged from its journal: an answer to the script, not to an HTTP request;
  // were one to reach the API it is the journal's conflict (after `conflict`, so 409 reads back as that).
  determinism: { exit: EXIT.failure, status: 409, wire: 'determinism', retryable: false },
} as const satisfies Record<string, { exit: number; status: number; wire: string; retryable: boolean }>;

export type ErrorKind = keyof typeof KINDS;

const KIND_NAMES = Object.keys(KINDS) as ErrorKind[];

/**
 * The kind an API answer stands for: its wire code if the table has it, else its status (a 422 is
 * a request the person must change, as a 400), else `internal`.
 */
export function kindOfAnswer(status: number, wire?: string): ErrorKind {
  const byWire = KIND_NAMES.find((kind) => KINDS[kind].wire === wire);
  if (byWire) return byWire;
  return kindOfStatus(status);
}

/**
 * The kind an HTTP status stands for (the first in the table with it). A 422 (well-formed, but
 * its content refused) and the unlisted 4xx (405, 415...) are the caller's to fix: usage.
 */
export function kindOfStatus(status: number): ErrorKind {
  const byStatus = KIND_NAMES.find((kind) => KINDS[kind].status === status);
  if (byStatus) return byStatus;
  return status >= 400 && status < 500 ? 'usage' : 'internal';
}

/**
 * One base error with a kind and a stable wire `code` (the kind's, unless a more precise one is
 * given). Terminal errors are the user's to fix (bad input, a script that diverged from its
 * journal); retryable ones may pass on their own (a store that is restarting).
 */
export class SpoolError extends Error {
  readonly code: string;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown; code?: string },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = options?.code ?? KINDS[kind].wire;
  }
}

/** What the CLI exits with for an error: its kind's exit code, 1 for an error of no kind. */
export function exitCodeOf(error: unknown): number {
  return error instanceof SpoolError ? KINDS[error.kind].exit : EXIT.failure;
}

export class TerminalError extends SpoolError {}

/**
 * An error that may pass if the caller waits and tries again (the operator retries it; the API
 * answers it with `Retry-After`). `retryAfterMs`, when known, is how long to wait.
 */
export class RetryableError extends SpoolError {
  readonly retryAfterMs: number;

  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown; code?: string; retryAfterMs?: number }) {
    super(kind, message, options);
    this.retryAfterMs = options?.retryAfterMs ?? 1000;
  }
}

/** Bad input from a person or a script: one line says what is wrong; nothing was recorded. */
export class UsageError extends TerminalError {
  constructor(message: string) {
    super('usage', message);
  }
}

/** A submit refused by its admission rules (a rate with policy drop): no run was made. */
export class RefusedError extends TerminalError {
  constructor(message: string) {
    super('refused', message);
  }
}

/** A replay reached a different durable call than the journal recorded at that position. */
export class DeterminismError extends TerminalError {
  constructor(message: string) {
    super('determinism', message);
  }
}

/**
 * The error an API answer stands for, rebuilt through the table: a kind that may pass on its own
 * (`unavailable`) is retryable; the answer's own wire code is kept.
 */
export function errorOfAnswer(status: number, wire: string | undefined, message: string): SpoolError {
  const kind = kindOfAnswer(status, wire);
  const options = wire === undefined ? {} : { code: wire };
  return KINDS[kind].retryable ? new RetryableError(kind, message, options) : new SpoolError(kind, message, options);
}

export function ensureError(value: unknown): Error {
  if (value instanceof Error) return value;
  try {
    return new Error(typeof value === 'string' ? value : JSON.stringify(value));
  } catch {
    return new Error(String(value));
  }
}
