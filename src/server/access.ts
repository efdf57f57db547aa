import type { NextFunction, Request, Response } from 'express';
import type { Access, ServerContext } from './context.js';
import { projectOfRunId } from '../common/ids.js';

const READ_VERBS: Record<string, Access['verb']> = { GET: 'get', HEAD: 'get' };

/**
 * The access a control request needs: reading a run is `get runs`; cancelling it, signalling it
 * and approving its gates change it (`update runs`); submitting and rerunning are `create runs`; emitting an event
 * may start runs (`create events`).
 */
export function accessOf(req: Request, defaultProject: string): Access | null {
  const parts = req.path.split('/').filter(Boolean).map(decodeURIComponent);
  const [collection, id] = parts;
  const body = (req.body ?? {}) as Record<string, unknown>;
  const query = req.query as Record<string, unknown>;
  const project = (typeof body.project === 'string' && body.project) || (typeof query.project === 'string' && query.project) || defaultProject;
  const read = READ_VERBS[req.method];
  switch (collection) {
    case 'runs':
      if (!id) return { verb: read ? 'list' : 'create', resource: 'runs', project };
      // A rerun starts a run: authorized as a submit, in the old run's project.
      if (parts[2] === 'rerun' && parts.length === 3) return { verb: 'create', resource: 'runs', project: projectOfRunId(id) };
      return { verb: read ?? 'update', resource: 'runs', project: projectOfRunId(id), name: id };
    case 'events':
      return { verb: 'create', resource: 'events', project };
    case 'handlers':
    case 'schedules':
      if (!id) return { verb: 'list', resource: collection, project };
      return { verb: read ?? (req.method === 'DELETE' ? 'delete' : 'update'), resource: collection, project, name: id };
    case 'workflows':
      // One workflow's answer holds its script, as a run's does; its stats are counts, as the list's.
      return id && parts.length === 2 ? { verb: 'get', resource: 'workflows', project, name: id } : { verb: 'list', resource: 'workflows', project };
    // The gates waiting across the project's runs: as reading its runs.
    case 'approvals':
      return { verb: 'list', resource: 'runs', project };
    case 'state':
      return { verb: read ?? (req.method === 'DELETE' ? 'delete' : 'update'), resource: 'state', project };
    default:
      return null;
  }
}

/**
 * The header that carries the caller's credentials when the request came through the API server's
 * service proxy, which keeps the Authorization header for itself (`spool --context …` uses it).
 */
export const USER_AUTHORIZATION = 'x-spool-authorization';

/** Lets through only requests the context's authorizer allows (all of them where there is none). */
export function authorizeRequests(ctx: ServerContext) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const authorize = ctx.authorize;
    if (!authorize || req.path.startsWith('/agent/')) return next();
    // Already authorized on the operator's aggregated API (front-proxy identity and a
    // SubjectAccessReview on the Run's subresource); res.locals is never set from outside.
    if (typeof res.locals.user === 'string') return next();
    const access = accessOf(req, ctx.defaultProject);
    // Who asked, for what a route records about them (who answered an approval, and in which groups).
    const who = access ? await authorize(req.get(USER_AUTHORIZATION) ?? req.get('authorization') ?? '', access) : undefined;
    if (typeof who === 'string') res.locals.user = who;
    else if (who) Object.assign(res.locals, { user: who.user, groups: who.groups });
    next();
  };
}
