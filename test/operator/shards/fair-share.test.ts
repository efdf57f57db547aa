import { describe, expect, it } from 'vitest';
import { nextShardMove, type ShardView } from '../../../src/operator/shards/fair-share.js';

/**
 * Every replica moves by what it sees alone; played out round after round, each replica taking its
 * turn, the shares must settle with every shard held once and each replica at floor or ceiling.
 */
function settle(shards: number, replicas: string[], start: Map<number, string> = new Map()): Map<number, string> {
  const held = new Map(start);
  for (let round = 0; round < 50; round++) {
    let moved = false;
    for (const self of replicas) {
      const holders = Array.from({ length: shards }, (_, shard) => held.get(shard));
      const mine = holders.flatMap((holder, shard) => (holder === self ? [shard] : []));
      const move = nextShardMove({ shards, self, replicas, holders, mine });
      if (!move) continue;
      moved = true;
      if ('release' in move) held.delete(move.release);
      else for (const shard of move.take) if (!held.has(shard)) held.set(shard, self);
    }
    if (!moved) return held;
  }
  throw new Error(`no settled share after 50 rounds: ${JSON.stringify([...held])}`);
}

const counts = (held: Map<number, string>, replicas: string[]): number[] => replicas.map((replica) => [...held.values()].filter((holder) => holder === replica).length).sort();

describe('the fair share of shards', () => {
  it.each([
    [1, ['a']],
    [1, ['a', 'b', 'c']],
    [4, ['a', 'b', 'c']],
    [8, ['a', 'b', 'c']],
    [16, ['a', 'b', 'c', 'd', 'e']],
    [3, ['a', 'b', 'c', 'd']],
  ])('%i shards among %j settle with every shard held and each replica at floor or ceiling', (shards, replicas) => {
    const held = settle(shards, replicas);
    expect(held.size).toBe(shards);
    const floor = Math.floor(shards / replicas.length);
    for (const count of counts(held, replicas)) expect([floor, Math.ceil(shards / replicas.length)]).toContain(count);
  });

  it('a replica that joins gets its share from those that held everything', () => {
    const alone = settle(8, ['a']);
    expect(counts(alone, ['a'])).toEqual([8]);
    const joined = settle(8, ['a', 'b', 'c'], alone);
    expect(joined.size).toBe(8);
    expect(counts(joined, ['a', 'b', 'c'])).toEqual([2, 3, 3]);
  });

  it('the shards of a replica that left are shared out among those that remain', () => {
    const three = settle(6, ['a', 'b', 'c']);
    const left = new Map([...three].filter(([, holder]) => holder !== 'c'));
    expect(left.size).toBe(4);
    expect(counts(settle(6, ['a', 'b'], left), ['a', 'b'])).toEqual([3, 3]);
  });

  it('4 shards among 3 replicas: 2 + 2 + 0 is not left as it is (the ceiling alone would)', () => {
    const view = (self: string, mine: number[]): ShardView => ({ shards: 4, self, replicas: ['a', 'b', 'c'], holders: ['a', 'a', 'b', 'b'], mine });
    expect(nextShardMove(view('a', [0, 1]))).toEqual({ release: 1 });
    // The replica with none waits for a free shard; it takes no held one.
    expect(nextShardMove(view('c', []))).toBeNull();
    // Once one is free, a replica at the floor does not take it back while another is below the floor.
    const freed = { shards: 4, replicas: ['a', 'b', 'c'], holders: ['a', undefined, 'b', 'b'] };
    expect(nextShardMove({ ...freed, self: 'a', mine: [0] })).toBeNull();
    expect(nextShardMove({ ...freed, self: 'c', mine: [] })).toEqual({ take: [1] });
  });

  it('a shard whose holder is gone (its Lease expired) is free to take; one still held is not', () => {
    expect(nextShardMove({ shards: 2, self: 'a', replicas: ['a'], holders: ['a', undefined], mine: [0] })).toEqual({ take: [1] });
    expect(nextShardMove({ shards: 2, self: 'a', replicas: ['a'], holders: ['a', 'gone'], mine: [0] })).toBeNull();
  });
});
