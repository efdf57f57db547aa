import { RetryableError } from '../common/errors.js';

/**
 * The database cannot be reached right now (refused, cut off, shutting down, starting up): what
 * a caller does is wait and try again, never record a failure. Raised by the PostgreSQL driver in
 * place of the driver's own error, whose words stay in `cause`.
 */
export class StoreUnavailableError extends RetryableError {
  constructor(cause: unknown) {
    super('unavailable', 'the database cannot be reached right now; try again shortly', { cause });
  }
}

/** Socket errors of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether a pg error means the server is away rather than the statement wrong: a socket error,
 * a connection ended under us, or SQLSTATE class 08 (connection exception), 57P01-57P03 (admin
 * shutdown, crash shutdown, cannot connect now).
 */
export function isUnavailable(error: unknown): boolean {
  const failed = error as { code?: unknown; message?: unknown } | null;
  const code = typeof failed?.code === 'string' ? failed.code : '';
  if (NETWORK_CODES.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code)) return true;
  const message = typeof failed?.message === 'string' ? failed.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}

/** The error to throw for a driver error: StoreUnavailableError when the server is away. */
export function storeError(error: unknown): unknown {
  return isUnavailable(error) ? new StoreUnavailableError(error) : error;
}
