import { userInfo } from 'node:os';
import type { Response } from 'express';
import type { ServerContext } from './context.js';

/** A person as the server knows them: their user name, and the groups their identity carries. */
export interface Caller {
  user: string | null;
  /** From the cluster's authentication (TokenReview, or the aggregated API's front proxy); none on spool dev. */
  groups: string[];
}

/** Who the person calling is: the user the cluster authenticated, or on `spool dev` whoever runs it. */
export function callerOf(ctx: ServerContext, res: Response): string | null {
  const user = (res.locals as { user?: unknown }).user;
  if (typeof user === 'string' && user) return user;
  if (ctx.authorize) return null;
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}

/** The caller with their groups, as authorization left them in res.locals. */
export function callerWithGroups(ctx: ServerContext, res: Response): Caller {
  const groups = (res.locals as { groups?: unknown }).groups;
  return { user: callerOf(ctx, res), groups: Array.isArray(groups) ? groups.filter((each): each is string => typeof each === 'string') : [] };
}
