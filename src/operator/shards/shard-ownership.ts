import { performance } from 'node:perf_hooks';
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { ensureError } from '../../common/errors.js';
import { sleep } from '../kube/backoff.js';
import { startLeaderElection, type LeaderElection } from '../kube/leader-election.js';
import { abortableRequest, httpStatus } from '../kube/request-options.js';
import { nextShardMove } from './fair-share.js';

/** Shard 0's Lease is the one the operator has always led by: one shard is exactly the single leader of before. */
export const LEADER_LEASE = 'hyperspool-operator';
export const shardLeaseName = (shard: number): string => (shard === 0 ? LEADER_LEASE : `${LEADER_LEASE}-shard-${shard}`);
/** Each replica's own Lease, renewed while it lives: how replicas that hold no shard yet are seen. */
export const replicaLeaseName = (replica: string): string => `${LEADER_LEASE}-replica-${replica}`;
const REPLICA_LEASE_PREFIX = replicaLeaseName('');

export interface ShardOwnershipOptions {
  kubeConfig: KubeConfig;
  /** Where the Leases live (the operator's own namespace). */
  namespace: string;
  /** This replica's name (the pod's), which names its replica Lease. */
  replica: string;
  /** This replica's identity in every Lease it holds, `name@url`: others forward agents' calls to the url. */
  identity: string;
  /** How many shards the runs are split into (--shards); every replica must be given the same. */
  shards: number;
  leaseDurationSeconds?: number;
  /**
   * How long another replica's own Lease may go unrenewed before this one deletes it (a pod that
   * crashed leaves its Lease behind, and a Deployment's pods get new names). 10 leases unless set.
   */
  forgetReplicaAfterSeconds?: number;
  /**
   * This replica leads the shard now. The signal aborts when it stops leading it; the returned
   * promise is its work winding down, which a graceful hand-over waits for before freeing the Lease.
   */
  onShardGained: (shard: number, signal: AbortSignal) => void | Promise<void>;
  onShardLost?: (shard: number) => void;
  onError?: (error: Error, shard?: number) => void;
}

export interface ShardOwnership {
  readonly count: number;
  /** The shards this replica leads now (each within its renew deadline), in order. */
  owned(): number[];
  owns(shard: number): boolean;
  /** The identity of the shard's leader as last seen (this replica's own if it leads it), or undefined. */
  ownerOf(shard: number): string | undefined;
  /** Stops as a crash would: every Lease is left to expire. */
  stop(): Promise<void>;
  /** Hands every shard over (each waits for its work to wind down) and leaves, so others take them at once. */
  release(): Promise<void>;
}

interface Seen {
  resourceVersion: string | undefined;
  holder: string | undefined;
  durationMs: number;
  /** performance.now() when this replica first saw this version. */
  at: number;
}

/**
 * Shards of the runs, each a Lease led with the safety of leader-election.ts (one election per
 * shard this replica goes after). With one shard, that is the whole of it: every replica campaigns
 * for the one Lease, as before shards. With more, a round every retry period renews this replica's
 * own Lease, reads the namespace's Leases (which replicas live, who leads each shard: alive means
 * changed within its duration by this replica's clock, as the election judges) and makes one move
 * towards the fair share (fair-share.ts): hand one shard over, or go after free ones.
 */
export function startShardOwnership(options: ShardOwnershipOptions): ShardOwnership {
  const { shards, identity } = options;
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards must be a whole number >= 1, not ${shards}`);
  const leaseDurationSeconds = options.leaseDurationSeconds ?? 15;
  const retryPeriodMs = (leaseDurationSeconds / 7.5) * 1000;
  const forgetReplicaAfterMs = (options.forgetReplicaAfterSeconds ?? leaseDurationSeconds * 10) * 1000;
  if (!(forgetReplicaAfterMs > leaseDurationSeconds * 1000)) throw new RangeError('forgetReplicaAfterSeconds must be more than leaseDurationSeconds, or live replicas would be forgotten');
  const report = (error: unknown, shard?: number): void => {
    try {
      options.onError?.(ensureError(error), shard);
    } catch {
      // Ownership must not die of its reporter.
    }
  };
  const elections = new Map<number, LeaderElection>();
  const elect = (shard: number): LeaderElection =>
    startLeaderElection({
      kubeConfig: options.kubeConfig,
      namespace: options.namespace,
      name: shardLeaseName(shard),
      identity,
      leaseDurationSeconds,
      onStartedLeading: (signal) => options.onShardGained(shard, signal),
      onStoppedLeading: () => options.onShardLost?.(shard),
      onError: (error) => report(error, shard),
    });

  /** The live leader of each shard as the last round read it. */
  let holders: (string | undefined)[] = Array.from({ length: shards }, () => undefined);
  const stopping = new AbortController();
  /** release(), not stop(): this replica's own Lease goes too. */
  let leaving = false;
  const rounds = shards === 1 ? (elections.set(0, elect(0)), Promise.resolve()) : rebalance();

  async function rebalance(): Promise<void> {
    const api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    const seen = new Map<string, Seen>();
    let mine: V1Lease | undefined;
    const look = (lease: V1Lease): Seen => {
      const name = lease.metadata?.name ?? '';
      const before = seen.get(name);
      const version = lease.metadata?.resourceVersion;
      const record = before && before.resourceVersion === version ? before : { resourceVersion: version, holder: lease.spec?.holderIdentity || undefined, durationMs: (lease.spec?.leaseDurationSeconds ?? leaseDurationSeconds) * 1000, at: performance.now() };
      seen.set(name, record);
      return record;
    };
    const alive = (lease: V1Lease): string | undefined => {
      const record = look(lease);
      return performance.now() < record.at + record.durationMs ? record.holder : undefined;
    };
    /** Another replica's Lease unrenewed for long: deleted, unless it was renewed meanwhile (the precondition). */
    const forgetIfLongGone = async (lease: V1Lease, request: ReturnType<typeof abortableRequest>): Promise<void> => {
      const { name = '', resourceVersion } = lease.metadata ?? {};
      if (name === replicaLeaseName(options.replica) || performance.now() < look(lease).at + forgetReplicaAfterMs) return;
      await api.deleteNamespacedLease({ name, namespace: options.namespace, body: { preconditions: { resourceVersion } } }, request).catch((error: unknown) => {
        if (![404, 409].includes(httpStatus(error) ?? 0)) throw error;
      });
      seen.delete(name);
    };
    const renewReplicaLease = async (request: ReturnType<typeof abortableRequest>): Promise<void> => {
      const name = replicaLeaseName(options.replica);
      const body: V1Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: options.namespace, ...(mine?.metadata?.resourceVersion ? { resourceVersion: mine.metadata.resourceVersion } : {}) },
        spec: { holderIdentity: identity, leaseDurationSeconds, renewTime: new V1MicroTime() },
      };
      try {
        mine = mine ? await api.replaceNamespacedLease({ name, namespace: options.namespace, body }, request) : await api.createNamespacedLease({ namespace: options.namespace, body }, request);
      } catch (error) {
        // Left by this replica's previous life (409 on create), or changed since (409 on replace): read, and renew next round.
        mine = httpStatus(error) === 409 ? await api.readNamespacedLease({ name, namespace: options.namespace }, request) : undefined;
        if (httpStatus(error) !== 409) throw error;
      }
    };
    while (!stopping.signal.aborted) {
      try {
        const request = abortableRequest(AbortSignal.any([stopping.signal, AbortSignal.timeout(Math.ceil(retryPeriodMs * 2))]));
        await renewReplicaLease(request);
        const leases = (await api.listNamespacedLease({ namespace: options.namespace }, request)).items;
        const byName = new Map(leases.map((lease) => [lease.metadata?.name ?? '', lease]));
        const replicaLeases = leases.filter((lease) => (lease.metadata?.name ?? '').startsWith(REPLICA_LEASE_PREFIX));
        const replicas = replicaLeases.map(alive).filter((holder) => holder !== undefined);
        for (const lease of replicaLeases) await forgetIfLongGone(lease, request);
        holders = Array.from({ length: shards }, (_, shard) => {
          if (elections.get(shard)?.isLeader()) return identity;
          const lease = byName.get(shardLeaseName(shard));
          return lease ? alive(lease) : undefined;
        });
        // A campaign another replica won: given up, so this replica may go after a free shard instead.
        for (const [shard, election] of elections) {
          const holder = holders[shard];
          if (holder !== undefined && holder !== identity) {
            elections.delete(shard);
            await election.release();
          }
        }
        if (stopping.signal.aborted) break;
        const move = nextShardMove({ shards, self: identity, replicas, holders, mine: [...elections.keys()] });
        if (move && 'release' in move) {
          const election = elections.get(move.release);
          elections.delete(move.release);
          await election?.release();
        } else if (move) {
          for (const shard of move.take) elections.set(shard, elect(shard));
        }
      } catch (error) {
        if (!stopping.signal.aborted) report(new Error(`sharing the shards failed: ${ensureError(error).message}`));
      }
      await sleep(retryPeriodMs * (1 + Math.random() * 0.2), stopping.signal);
    }
    // Whatever the last renewal's fate (leaving aborts one under way, which forgets `mine`).
    if (leaving) {
      // Left now, not when it expires: the others share this replica's shards out at their next round.
      await api.deleteNamespacedLease({ name: replicaLeaseName(options.replica), namespace: options.namespace }, abortableRequest(AbortSignal.timeout(Math.ceil(retryPeriodMs * 2)))).catch(() => undefined);
    }
  }

  const end = async (each: (election: LeaderElection) => Promise<void>, leave: boolean): Promise<void> => {
    leaving = leave;
    stopping.abort();
    await rounds;
    await Promise.all([...elections.values()].map(each));
    elections.clear();
  };
  return {
    count: shards,
    owned: () => [...elections].flatMap(([shard, election]) => (election.isLeader() ? [shard] : [])).sort((a, b) => a - b),
    owns: (shard) => elections.get(shard)?.isLeader() ?? false,
    ownerOf: (shard) => elections.get(shard)?.leader() ?? holders[shard],
    stop: () => end((election) => election.stop(), false),
    release: () => end((election) => election.release(), true),
  };
}
