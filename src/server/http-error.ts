import { isUtf8 } from '../common/json-text.js';
import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { KINDS, RetryableError, SpoolError, ensureError, kindOfStatus } from '../common/errors.js';
import type { ErrorAnswer } from '../api/responses.js';

/** An error with the HTTP status and the precise wire code a route answers with; its kind follows from its status. */
export class HttpError extends SpoolError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
  ) {
    super(kindOfStatus(status), message, { code });
  }
}

export const badRequest = (message: string): HttpError => new HttpError(400, 'bad_request', message);
export const notFound = (what: string): HttpError => new HttpError(404, 'not_found', `${what} not found`);
export const conflict = (code: string, message: string): HttpError => new HttpError(409, code, message);

/**
 * Runs a check of a well-formed field's content (a cron expression, a pipeline document): its
 * refusal is a 422 with `code`, since the request itself was what the API takes.
 */
export function unprocessable<T>(code: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    // A refusal with a code of its own (a graph's `invalid_input`) keeps it, and its kind's status.
    if (error instanceof SpoolError && !(error instanceof HttpError) && error.kind === 'usage' && error.code === KINDS.usage.wire)
      throw new HttpError(422, code, error.message);
    throw error;
  }
}

const refusal = (code: string, message: string): ErrorAnswer => ({ error: { code, message } });

/** Every error answers `{ "error": { "code", "message" } }`; a message a person can act on. */
export function errorHandler(raw: unknown, req: Request, res: Response, next: NextFunction): void {
  void next;
  const error = ensureError(raw);
  if (error instanceof HttpError) {
    res.status(error.status).json(refusal(error.code, error.message));
  } else if (error instanceof RetryableError) {
    // The database or the artifact store is away (restarting): nothing was recorded; the caller tries again.
    const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    res.status(KINDS[error.kind].status).set('retry-after', String(seconds)).json(refusal(error.code, error.message));
  } else if (error instanceof SpoolError && error.kind !== 'internal') {
    res.status(KINDS[error.kind].status).json(refusal(error.code, error.message));
  } else if ((raw as { type?: string }).type === 'entity.parse.failed') {
    res.status(400).json(refusal('bad_json', 'the request body is not valid JSON'));
  } else if ((raw as { type?: string }).type === 'entity.too.large') {
    res.status(413).json(refusal('too_large', `the request body is over the ${BODY_LIMIT} limit`));
  } else if (clientStatus(raw) !== null) {
    // Express's own refusals (a path whose percent-encoding is broken...) keep their 4xx.
    res.status(clientStatus(raw) ?? 400).json(refusal('bad_request', error.message));
  } else {
    // Never a database's or a runtime's own words to the caller: an id to find them in the log.
    const id = randomUUID().slice(0, 8);
    process.stderr.write(`spool: internal error ${id} on ${req.method} ${req.path}: ${error.stack ?? error.message}\n`);
    res.status(500).json(refusal('internal', `internal error ${id}; the server's log has the details`));
  }
}

function clientStatus(raw: unknown): number | null {
  const status = (raw as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

/** The largest request body the API reads. */
export const BODY_LIMIT = '5mb';

/**
 * express.json's `verify`: a body that is not UTF-8 is refused, not read with U+FFFD in place of
 * what it held (a workflow name, a payload would be stored changed). docs/limits.md.
 */
export function utf8Body(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw new HttpError(400, 'bad_encoding', 'the request body is not UTF-8 text; JSON must be sent as UTF-8');
}

/** A body the API cannot read as JSON: 415, rather than a confusing complaint about its fields. */
export function requireJson(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    next(new HttpError(415, 'unsupported_media_type', `send the request body as JSON (Content-Type: application/json), not ${req.headers['content-type'] ?? 'no type'}`));
    return;
  }
  next();
}
