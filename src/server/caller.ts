import { userInfo } from 'node:os';
import type { Response } from 'express';
import type { ServerContext } from './context.js';
import { ACT_AS_HEADER } from '../api/act-as.js';

/** A person as the server knows them: their user name, and the groups their identity carries. */
export interface Caller {
  user: string | null;
  /** From the cluster's authentication (TokenReview, or the aggregated API's front proxy); none on spool dev. */
  groups: string[];
}

/**
 * Who the person calling is: the user the cluster authenticated, or on `spool dev` whoever runs it,
 * or whoever `spool --as` names there (that server trusts its local callers; a server that
 * authenticates people never reads the header).
 */
export function callerOf(ctx: ServerContext, res: Response): string | null {
  const user = (res.locals as { user?: unknown }).user;
  if (typeof user === 'string' && user) return user;
  if (ctx.authorize) return null;
  const as = res.req.get(ACT_AS_HEADER)?.trim();
  if (as) return as;
  return processUser();
}

let processUserName: string | null | undefined;

/** Whoever runs this server, read once: os.userInfo() reads the user database on every call. */
function processUser(): string | null {
  if (processUserName === undefined) {
    try {
      processUserName = userInfo().username;
    } catch {
      processUserName = null;
    }
  }
  return processUserName;
}

/** The caller with their groups, as authorization left them in res.locals. */
export function callerWithGroups(ctx: ServerContext, res: Response): Caller {
  const groups = (res.locals as { groups?: unknown }).groups;
  return { user: callerOf(ctx, res), groups: Array.isArray(groups) ? groups.filter((each): each is string => typeof each === 'string') : [] };
}
