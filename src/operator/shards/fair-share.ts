import { runShardKey } from '../../store/run-shards.js';

/**
 * How many shards a replica aims to hold, and which to let go or go after: every replica decides
 * for itself from what it sees (the live replicas and who holds which shard), and together they
 * converge on each holding floor(shards / replicas) or one more, every shard held.
 */
export interface ShardView {
  shards: number;
  /** This replica's identity. */
  self: string;
  /** The replicas seen alive, this one included. */
  replicas: readonly string[];
  /** The live holder of each shard (undefined: free, or its holder's lease expired). */
  holders: readonly (string | undefined)[];
  /** The shards this replica leads now. */
  mine: readonly number[];
}

export type ShardMove = { release: number } | { take: number[] } | null;

/**
 * One step towards the fair share, at most one kind of move at a time. A replica holding more than
 * ceil(shards / replicas) lets one go; so does one holding more than the floor while another holds
 * less (the ceiling alone can leave a replica with none: 4 shards, 3 replicas, 2 + 2 + 0). A replica
 * under its target goes after free shards: the ceiling, or only the floor while another replica is
 * below the floor (which leaves it the shard just given up, rather than taking it back at once).
 */
export function nextShardMove(view: ShardView): ShardMove {
  const replicas = Math.max(1, new Set([...view.replicas, view.self]).size);
  const ceiling = Math.ceil(view.shards / replicas);
  const floor = Math.floor(view.shards / replicas);
  const held = new Map<string, number>(view.replicas.map((replica) => [replica, 0]));
  for (const holder of view.holders) if (holder !== undefined && held.has(holder)) held.set(holder, (held.get(holder) ?? 0) + 1);
  const mine = view.mine.length;
  const anotherBelowFloor = [...held].some(([replica, count]) => replica !== view.self && count < floor);
  // The highest-numbered goes: the lowest (shard 0, the cluster-wide work) moves least often.
  const highest = Math.max(...view.mine);
  if (mine > ceiling || (mine > floor && anotherBelowFloor)) return { release: highest };
  const target = anotherBelowFloor ? floor : ceiling;
  if (mine >= target) return null;
  // Each replica looks from its own place in the ring, so replicas that join together seldom race for one shard.
  const start = runShardKey(view.self) % view.shards;
  const free = view.holders
    .flatMap((holder, shard) => (holder === undefined && !view.mine.includes(shard) ? [shard] : []))
    .sort((a, b) => ((a - start + view.shards) % view.shards) - ((b - start + view.shards) % view.shards));
  return free.length > 0 ? { take: free.slice(0, target - mine) } : null;
}
