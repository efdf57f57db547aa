import type { Request } from 'express';
import type { ResponseOf } from '../api/responses.js';
import type { Store } from '../store/store.js';
import { queryTime } from './body.js';
import { badRequest } from './http-error.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The slices a window may be cut into, shortest first: the shortest that gives at most MAX_BUCKETS. */
const BUCKETS = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY];
const MAX_BUCKETS = 60;
/** Longer windows would be a year of daily bars: more than a chart can show. */
const LONGEST_WINDOW = 400 * DAY;

/**
 * `GET /v1/workflows/:name/stats?since=&until=`: a workflow's runs by status over a window (the
 * last day by default) and the percentiles of how long its finished runs took, as the Workflows
 * page charts them. Runs other runs started count with those, as on the Workflows page.
 */
export async function workflowStats(store: Store, req: Request, project: string | undefined, now: Date): Promise<ResponseOf<'GET /workflows/:name/stats'>> {
  const query = req.query as Record<string, unknown>;
  const until = queryTime(query, 'until') ?? now;
  const since = queryTime(query, 'since') ?? new Date(until.getTime() - DAY);
  const window = until.getTime() - since.getTime();
  if (window <= 0) throw badRequest(`'since' (${since.toISOString()}) must be before 'until' (${until.toISOString()})`);
  if (window > LONGEST_WINDOW) throw badRequest(`the window from 'since' to 'until' may be at most 400 days, not ${Math.ceil(window / DAY)}`);
  const bucketMs = BUCKETS.find((length) => window / length <= MAX_BUCKETS) ?? DAY * 7;
  // Slices start on the clock (whole hours, UTC midnights): the window's start moves back to one.
  const start = new Date(Math.floor(since.getTime() / bucketMs) * bucketMs);
  const workflow = String(req.params.name);
  const stats = await store.runStats({ ...(project ? { project } : {}), workflow, rootsOnly: true, since: start, until }, bucketMs);
  return {
    workflow,
    since: start.toISOString(),
    until: until.toISOString(),
    bucketMs,
    buckets: stats.buckets.map((bucket) => ({ start: bucket.start.toISOString(), counts: bucket.counts })),
    durations: stats.durations,
  };
}
