import type { Request } from 'express';
import type { ServerContext } from './context.js';

/**
 * The project a list is read from: the one asked for; where requests are authorized, a list was
 * authorized for one project (accessOf), so only it; elsewhere every project (undefined).
 */
export function listedProject(ctx: ServerContext, req: Request): string | undefined {
  if (typeof req.query.project === 'string') return req.query.project;
  return ctx.authorize ? ctx.defaultProject : undefined;
}
