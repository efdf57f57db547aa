/**
 * One base error with a stable `code`. Terminal errors are the user's to fix (bad input, a script
 * that diverged from its journal); retryable ones may pass on their own (a store that is restarting).
 */
export class SpoolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class TerminalError extends SpoolError {}

export class RetryableError extends SpoolError {}

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

export function ensureError(value: unknown): Error {
  if (value instanceof Error) return value;
  try {
    return new Error(typeof value === 'string' ? value : JSON.stringify(value));
  } catch {
    return new Error(String(value));
  }
}
