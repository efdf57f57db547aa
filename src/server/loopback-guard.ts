import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** The host part of a Host header or an origin's URL: `127.0.0.1:7456` → `127.0.0.1`, `[::1]:80` → `[::1]`. */
function hostname(value: string): string {
  const host = value.startsWith('[') ? value.slice(0, value.indexOf(']') + 1) : value.split(':')[0] ?? '';
  return host.toLowerCase();
}

function originHost(origin: string): string | null {
  try {
    return hostname(new URL(origin).host);
  } catch {
    return null;
  }
}

/**
 * The dev server trusts whoever reaches its loopback port, so it must be sure that is who asks: a
 * web page the person visits could otherwise reach it through a rebound DNS name (Host is then
 * that name) or post to it from its own origin (Origin is then that page's). See docs/api.md.
 */
export function loopbackGuard(req: Request, _res: Response, next: NextFunction): void {
  const host = req.headers.host ?? '';
  if (!LOOPBACK.has(hostname(host))) {
    next(new HttpError(403, 'forbidden_host', `this server answers requests for localhost, 127.0.0.1 or [::1], not '${host}'`));
    return;
  }
  const origin = req.headers.origin;
  const changes = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS';
  if (changes && origin !== undefined && !LOOPBACK.has(originHost(origin) ?? '')) {
    next(new HttpError(403, 'forbidden_origin', `a page from ${origin} may not change anything here`));
    return;
  }
  next();
}
