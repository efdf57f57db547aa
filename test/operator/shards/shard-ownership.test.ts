import { randomBytes } from 'node:crypto';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicaLeaseName, shardLeaseName, startShardOwnership, type ShardOwnership } from '../../../src/operator/shards/shard-ownership.js';
import { startControlPlane, type ControlPlane } from '../../support/kube.js';

const SHARDS = 4;
// 5, not less: under a loaded machine's slow rounds a graceful hand-over must still beat a Lease's expiry clearly.
const LEASE_SECONDS = 5;
/** How long a shard's work takes to wind down once lost: a successor must not start meanwhile. */
const WIND_DOWN_MS = 300;
/** How long a crashed replica's own Lease stays before the others delete it. */
const FORGET_SECONDS = 6;

/**
 * Shard Leases on a real kube-apiserver, among replicas that come, crash and leave. Each shard's
 * work (from onShardGained until it has wound down) is tracked: two replicas' work on one shard at
 * the same moment is the one thing that must never happen.
 */
describe('shard ownership on a real kube-apiserver', () => {
  let plane: ControlPlane;
  let kubeConfig: KubeConfig;
  let namespace: string;
  /** The replicas working on each shard right now, and every overlap seen. */
  const working = new Map<number, Set<string>>();
  const overlaps: string[] = [];
  const replicas = new Map<string, ShardOwnership>();

  beforeAll(async () => {
    plane = await startControlPlane();
    kubeConfig = plane.kubeConfig();
    namespace = `shards-${randomBytes(4).toString('hex')}`;
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  }, 600_000);

  afterAll(async () => {
    await Promise.all([...replicas.values()].map((replica) => replica.stop()));
    await plane?.stop();
  });

  function start(name: string): ShardOwnership {
    const replica = startShardOwnership({
      kubeConfig,
      namespace,
      replica: name,
      identity: `${name}@http://${name}.invalid:7456`,
      shards: SHARDS,
      leaseDurationSeconds: LEASE_SECONDS,
      forgetReplicaAfterSeconds: FORGET_SECONDS,
      onShardGained: async (shard, signal) => {
        const now = working.get(shard) ?? new Set<string>();
        if (now.size > 0) overlaps.push(`${name} gained shard ${shard} while ${[...now].join(', ')} still worked on it`);
        working.set(shard, now.add(name));
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        await new Promise((resolve) => setTimeout(resolve, WIND_DOWN_MS));
        now.delete(name);
      },
    });
    replicas.set(name, replica);
    return replica;
  }

  async function untilTrue(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
    const started = Date.now();
    while (!check()) {
      if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const owners = (): Map<number, string[]> =>
    new Map(Array.from({ length: SHARDS }, (_, shard) => [shard, [...replicas].flatMap(([name, replica]) => (replica.owns(shard) ? [name] : []))]));
  /** Until every shard is led by exactly one replica and the shares are as expected (sorted counts). */
  async function untilShared(expected: number[], timeoutMs: number): Promise<void> {
    const started = Date.now();
    for (;;) {
      const led = owners();
      const counts = [...replicas].map(([name]) => [...led.values()].filter((names) => names.includes(name)).length).sort();
      if ([...led.values()].every((names) => names.length === 1) && JSON.stringify(counts) === JSON.stringify(expected)) return;
      if (Date.now() - started > timeoutMs) throw new Error(`shares after ${timeoutMs} ms: ${JSON.stringify([...led])}, not ${JSON.stringify(expected)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('one replica leads every shard; replicas that join get their share; a crashed one\'s shards move after its Leases expire, a leaving one\'s at once; never two at work on one shard', async () => {
    const a = start('op-a');
    await untilShared([SHARDS], 10_000);
    expect(a.owned()).toEqual([0, 1, 2, 3]);
    expect(a.ownerOf(2)).toBe('op-a@http://op-a.invalid:7456');

    start('op-b');
    start('op-c');
    await untilShared([1, 1, 2], 30_000);
    // Every replica tells who leads a shard it does not (where agents' calls are forwarded), as of its last round.
    const leader = owners();
    const told = () => [...replicas.values()].map((replica) => Array.from({ length: SHARDS }, (_, shard) => replica.ownerOf(shard)?.split('@')[0]));
    const truth = Array.from({ length: SHARDS }, (_, shard) => leader.get(shard)?.[0]);
    await untilTrue('every replica to tell each shard\'s leader', () => told().every((each) => JSON.stringify(each) === JSON.stringify(truth)), 2_000);

    // A crash: op-c's Leases are left to expire; the others take its shards after that, not before.
    const crashedAt = Date.now();
    const c = replicas.get('op-c')!;
    const crashedShards = c.owned();
    await c.stop();
    replicas.delete('op-c');
    // The survivors see the Leases expire, then each one's election watches a Lease for its own full duration
    // before it takes it (leader-election.ts): one to two lease durations.
    await untilShared([2, 2], 30_000);
    expect(Date.now() - crashedAt).toBeGreaterThanOrEqual((LEASE_SECONDS * 1000 * 2) / 3);
    expect(crashedShards.length).toBeGreaterThan(0);

    // A graceful leave: op-b hands its shards over, and op-a leads them well within a lease's time.
    const b = replicas.get('op-b')!;
    const leftAt = Date.now();
    await b.release();
    replicas.delete('op-b');
    await untilShared([SHARDS], LEASE_SECONDS * 1000);
    expect(Date.now() - leftAt).toBeLessThan(LEASE_SECONDS * 1000 + WIND_DOWN_MS);

    const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    const leases = async () => (await coordination.listNamespacedLease({ namespace })).items.map((lease) => lease.metadata?.name).sort();
    // Shard 0 is the Lease a single leader always held. op-b took its replica Lease away as it left; the
    // crashed op-c could not, so op-a deletes it once it has gone unrenewed for FORGET_SECONDS.
    const shardLeases = [shardLeaseName(0), shardLeaseName(1), shardLeaseName(2), shardLeaseName(3)];
    expect(await leases()).not.toContain(replicaLeaseName('op-b'));
    const expected = [...shardLeases, replicaLeaseName('op-a')].sort();
    const started = Date.now();
    while (JSON.stringify(await leases()) !== JSON.stringify(expected)) {
      if (Date.now() - started > (FORGET_SECONDS + LEASE_SECONDS) * 1000) throw new Error(`Leases left: ${JSON.stringify(await leases())}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Date.now() - crashedAt).toBeGreaterThanOrEqual(FORGET_SECONDS * 1000);
    expect(shardLeaseName(0)).toBe('hyperspool-operator');
    expect(overlaps).toEqual([]);
  }, 90_000);
});

describe('shard ownership options', () => {
  const given = (extra: { shards?: number; leaseDurationSeconds?: number; forgetReplicaAfterSeconds?: number }) => () =>
    startShardOwnership({ kubeConfig: new KubeConfig(), namespace: 'ns', replica: 'op-a', identity: 'op-a@http://a', shards: 2, onShardGained: () => undefined, ...extra });

  it('refuses a count of shards that is not a whole number of at least 1, and a replica forgotten before its Lease could expire', () => {
    expect(given({ shards: 0 })).toThrow('shards must be a whole number >= 1, not 0');
    expect(given({ shards: 1.5 })).toThrow('shards must be a whole number >= 1, not 1.5');
    expect(given({ leaseDurationSeconds: 5, forgetReplicaAfterSeconds: 5 })).toThrow('forgetReplicaAfterSeconds must be more than leaseDurationSeconds');
  });
});
