import { createHash } from 'node:crypto';

/**
 * Runs are split into shards by a hash of their id, so that several operator replicas each work
 * on their own share (src/operator/shards). The database and the operator must agree on a run's
 * shard: the executor asks the database for due runs of its shards, the Run reconciler and the
 * agents' forwarding ask in TypeScript. Both take the first 28 bits of the id's MD5 (28, not 32:
 * a non-negative int4 in SQL, no sign to strip).
 */
export const RUN_SHARD_KEY_SQL = (column: string): string => `('x' || substr(md5(${column}), 1, 7))::bit(28)::int`;

export function runShardKey(runId: string): number {
  return parseInt(createHash('md5').update(runId).digest('hex').slice(0, 7), 16);
}

/** The shard of a run among `count` shards (0 to count - 1). */
export function shardOfRun(runId: string, count: number): number {
  return runShardKey(runId) % count;
}

/** The shards a query keeps to: those of `owned` among `count` (absent: every run). */
export interface ShardFilter {
  count: number;
  owned: readonly number[];
}
