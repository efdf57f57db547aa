import { shardOfRun, type ShardFilter } from '../../store/run-shards.js';

/** The shards a replica leads, as the controllers ask it: each time, since shards come and go. */
export interface OwnedShards {
  readonly count: number;
  owned(): readonly number[];
}

/** One shard, the whole of the runs: a replica's controllers run only while it leads it. */
export const ONE_SHARD: OwnedShards = { count: 1, owned: () => [0] };

/** Does this replica act on the run now? With one shard, always: its controllers run only while it leads. */
export function ownsRun(shards: OwnedShards, runId: string): boolean {
  return shards.count === 1 || shards.owned().includes(shardOfRun(runId, shards.count));
}

/**
 * Workflows, Handlers, Schedules, ActivityClasses and the cluster-wide sweeps (artifacts, the
 * archive, chat gates) are shard 0's leader's: the one leader of before shards.
 */
export function ownsClusterWide(shards: OwnedShards): boolean {
  return shards.count === 1 || shards.owned().includes(0);
}

/** What the store's queries keep to (none with one shard: the queries of before shards, unchanged). */
export function shardFilter(shards: OwnedShards, only?: readonly number[]): ShardFilter | undefined {
  return shards.count === 1 ? undefined : { count: shards.count, owned: only ?? shards.owned() };
}
