import { runSearchWhere } from './run-search-sql.js';
import type { SqlClient } from './sql.js';
import { noRuns, type RunSearch, type RunStats, type RunStatus } from './types.js';

/**
 * A workflow's runs over a window, from the store: how many were created in each slice of it, by
 * the status they have now, and the percentiles of how long the finished ones took (created to
 * finished, as the runs list's duration sorts). Both read the runs the search finds, in SQL, so
 * a month of runs is two grouped scans, not a page of rows per slice.
 */
export async function queryRunStats(db: SqlClient, search: RunSearch & { since: Date; until: Date }, bucketMs: number): Promise<RunStats> {
  const { where, params } = runSearchWhere(search);
  const at = params.length + 1;
  const [slices, durations] = await Promise.all([
    db.query<{ slot: number; status: RunStatus; runs: number }>(
      `select floor(extract(epoch from created_at - $6::timestamptz) * 1000 / $${at})::int as slot, status, count(*)::int as runs
         from runs where ${where} group by slot, status`,
      [...params, bucketMs],
    ),
    db.query<{ runs: number; p50: number | null; p90: number | null; p99: number | null; longest: number | null }>(
      `select count(*)::int as runs,
              percentile_cont(0.5) within group (order by ms) as p50,
              percentile_cont(0.9) within group (order by ms) as p90,
              percentile_cont(0.99) within group (order by ms) as p99,
              max(ms) as longest
         from (select extract(epoch from finished_at - created_at)::float8 * 1000 as ms
                 from runs where ${where} and finished_at is not null) finished`,
      params,
    ),
  ]);
  const count = Math.ceil((search.until.getTime() - search.since.getTime()) / bucketMs);
  const buckets = Array.from({ length: count }, (_, slot) => ({
    start: new Date(search.since.getTime() + slot * bucketMs),
    counts: noRuns(),
  }));
  for (const row of slices) {
    const bucket = buckets[Number(row.slot)];
    if (bucket) bucket.counts[row.status] = Number(row.runs);
  }
  const [finished] = durations;
  const ms = (value: number | null | undefined): number => Math.round(Number(value ?? 0));
  return {
    buckets,
    durations:
      finished && Number(finished.runs) > 0
        ? { runs: Number(finished.runs), p50Ms: ms(finished.p50), p90Ms: ms(finished.p90), p99Ms: ms(finished.p99), maxMs: ms(finished.longest) }
        : null,
  };
}
