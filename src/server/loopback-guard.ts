import type { NextFunction, Request, Response } from 'express';
import { isLoopbackHost, isOwnOrigin } from '../common/loopback-origin.js';
import { HttpError } from './http-error.js';

/**
 * The dev server trusts whoever reaches its loopback port, so it must be sure that is who asks: a
 * web page the person visits could otherwise reach it through a rebound DNS name (Host is then
 * that name) or post to it from its own origin (Origin is then that page's). See docs/api.md.
 */
export function loopbackGuard(req: Request, _res: Response, next: NextFunction): void {
  const host = req.headers.host ?? '';
  if (!isLoopbackHost(host)) {
    next(new HttpError(403, 'forbidden_host', `this server answers requests for localhost, 127.0.0.1 or [::1], not '${host}'`));
    return;
  }
  const origin = req.headers.origin;
  const changes = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS';
  if (changes && origin !== undefined && !isOwnOrigin(origin, host)) {
    next(new HttpError(403, 'forbidden_origin', `a page from ${origin} may not change anything here`));
    return;
  }
  next();
}
