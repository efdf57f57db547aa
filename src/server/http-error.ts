import type { NextFunction, Request, Response } from 'express';
import { SpoolError, ensureError } from '../common/errors.js';

/** An error with the HTTP status and stable code the API answers with. */
export class HttpError extends SpoolError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
  ) {
    super(code, message);
  }
}

export const badRequest = (message: string): HttpError => new HttpError(400, 'bad_request', message);
export const notFound = (what: string): HttpError => new HttpError(404, 'not_found', `${what} not found`);

/** Every error answers `{ "error": { "code", "message" } }`; a message a person can act on. */
export function errorHandler(raw: unknown, _req: Request, res: Response, next: NextFunction): void {
  void next;
  const error = ensureError(raw);
  if (error instanceof HttpError) {
    res.status(error.status).json({ error: { code: error.code, message: error.message } });
  } else if (error instanceof SpoolError && error.code === 'usage') {
    res.status(400).json({ error: { code: 'bad_request', message: error.message } });
  } else if ((raw as { type?: string }).type === 'entity.parse.failed') {
    res.status(400).json({ error: { code: 'bad_json', message: 'the request body is not valid JSON' } });
  } else {
    res.status(500).json({ error: { code: 'internal', message: error.message } });
  }
}
