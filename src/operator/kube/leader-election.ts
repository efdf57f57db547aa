import { performance } from 'node:perf_hooks';
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { ensureError } from '../../common/errors.js';
import { sleep } from './backoff.js';
import { abortableRequest, httpStatus } from './request-options.js';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.
 *
 * Safety rests on two things. Every write carries the resourceVersion it read, so of two
 * candidates racing for a free lease the API server accepts one and answers the other 409. And
 * time is only ever compared on one clock: a candidate treats a lease as expired when it has not
 * seen the record change for leaseDuration by its own monotonic clock (never by the holder's
 * renewTime, which is another machine's wall clock), while the leader gives up leadership when it
 * has not renewed for renewDeadline (< leaseDuration) since it sent its last successful renewal. A
 * successor can only have seen that renewal after it was sent, so the old leader has stopped
 * before anyone else may start, clock skew notwithstanding; only a clock *rate* difference larger
 * than leaseDuration - renewDeadline could break it.
 */
export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name; every candidate for the same role uses the same one. */
  name: string;
  /**
   * This candidate, unique among candidates. Others read it to find the leader, so it may carry an
   * address: `podname@http://10.0.0.5:7456`.
   */
  identity: string;
  /** How long a lease the holder stopped renewing keeps others away. 15 unless set. */
  leaseDurationSeconds?: number;
  /** How long the leader keeps trying to renew before it gives up. Two thirds of the lease unless set. */
  renewDeadlineSeconds?: number;
  /** How often to renew, and how often a candidate checks the lease. A 7.5th of the lease unless set. */
  retryPeriodSeconds?: number;
  /**
   * Called on becoming leader. The signal aborts when leadership ends: stop the leader's work then.
   * If it returns a promise, release() waits for it (up to renewDeadline) before freeing the lease,
   * so a successor never starts while this replica is still winding down.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called when leadership ends: lost, given up at the deadline, stop() or release(). */
  onStoppedLeading?: () => void;
  /** Called when the lease's holder changes as this candidate sees it (undefined: nobody holds it). */
  onNewLeader?: (identity: string | undefined) => void;
  /** Told of failed requests; the election carries on by itself. */
  onError?: (error: Error) => void;
}

export interface LeaderElection {
  /** True while this candidate leads and is within its renew deadline. */
  isLeader(): boolean;
  /**
   * The identity of the current leader as last seen (at most a retryPeriod old), or undefined
   * when the lease is free, expired or was never read.
   */
  leader(): string | undefined;
  /**
   * Stops campaigning and leading without touching the lease: a successor waits for it to expire.
   * This is what a crash looks like; prefer release() on a graceful shutdown.
   */
  stop(): Promise<void>;
  /** Stops, then frees the lease if it is still ours, so a successor takes over at its next retry. */
  release(): Promise<void>;
}

interface Observed {
  resourceVersion: string | undefined;
  holder: string | undefined;
  leaseDurationMs: number;
  /** performance.now() when this candidate first saw this version of the record. */
  at: number;
}

type Attempt = 'acquired' | 'held' | 'failed';

export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const leaseDurationSeconds = options.leaseDurationSeconds ?? 15;
  const renewDeadlineMs = (options.renewDeadlineSeconds ?? (leaseDurationSeconds * 2) / 3) * 1000;
  const retryPeriodMs = (options.retryPeriodSeconds ?? leaseDurationSeconds / 7.5) * 1000;
  const leaseDurationMs = leaseDurationSeconds * 1000;
  if (!options.identity) throw new RangeError('leader election needs a non-empty identity');
  if (!Number.isInteger(leaseDurationSeconds) || leaseDurationSeconds < 1) {
    throw new RangeError(`leaseDurationSeconds must be a whole number of seconds >= 1, not ${leaseDurationSeconds}`);
  }
  if (!(renewDeadlineMs < leaseDurationMs)) {
    throw new RangeError('renewDeadlineSeconds must be less than leaseDurationSeconds, or two leaders may overlap');
  }
  if (!(retryPeriodMs > 0 && retryPeriodMs < renewDeadlineMs)) {
    throw new RangeError('retryPeriodSeconds must be above 0 and below renewDeadlineSeconds');
  }

  const api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  const { namespace, name, identity } = options;
  const stopController = new AbortController();
  const stopSignal = stopController.signal;
  const now = (): number => performance.now();

  let observed: Observed | undefined;
  let lastLease: V1Lease | undefined;
  let reportedLeader: string | undefined;
  let leading: { controller: AbortController; renewedAt: number; work: Promise<void> } | undefined;
  let lastWork: Promise<void> = Promise.resolve();

  function report(error: unknown): void {
    try {
      options.onError?.(ensureError(error));
    } catch {
      // The election must not die of its reporter.
    }
  }

  function expired(record: Observed): boolean {
    return record.holder === undefined || now() >= record.at + record.leaseDurationMs;
  }

  function observe(lease: V1Lease): void {
    lastLease = lease;
    const resourceVersion = lease.metadata?.resourceVersion;
    if (observed && observed.resourceVersion === resourceVersion) return;
    const holder = lease.spec?.holderIdentity || undefined;
    const seconds = lease.spec?.leaseDurationSeconds;
    observed = {
      resourceVersion,
      holder,
      leaseDurationMs: (seconds && seconds > 0 ? seconds : leaseDurationSeconds) * 1000,
      at: now(),
    };
    if (holder !== reportedLeader) {
      reportedLeader = holder;
      try {
        options.onNewLeader?.(holder);
      } catch (error) {
        report(error);
      }
    }
  }

  /** One read and, when the lease is free, expired or ours, one write conditioned on what was read. */
  async function tryAcquireOrRenew(deadline: number): Promise<Attempt> {
    const signal = AbortSignal.any([stopSignal, AbortSignal.timeout(Math.max(1, Math.ceil(deadline - now())))]);
    const request = abortableRequest(signal);
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace }, request);
    } catch (error) {
      if (httpStatus(error) !== 404) {
        if (!stopSignal.aborted) report(new Error(`reading lease ${namespace}/${name} failed: ${ensureError(error).message}`));
        return 'failed';
      }
      const time = new V1MicroTime();
      const body: V1Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: time, renewTime: time, leaseTransitions: 0 },
      };
      try {
        observe(await api.createNamespacedLease({ namespace, body }, request));
        return 'acquired';
      } catch (createError) {
        // 409: another candidate created it first; the next read tells who.
        if (httpStatus(createError) !== 409 && !stopSignal.aborted) {
          report(new Error(`creating lease ${namespace}/${name} failed: ${ensureError(createError).message}`));
        }
        return 'failed';
      }
    }

    observe(lease);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity || undefined;
    const mine = holder === identity;
    if (!mine && observed && !expired(observed)) return 'held';
    const time = new V1MicroTime();
    const body: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: time,
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : time,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    try {
      // metadata.resourceVersion is the one just read: if anyone wrote in between, this is a 409.
      observe(await api.replaceNamespacedLease({ name, namespace, body }, request));
      return 'acquired';
    } catch (error) {
      if (httpStatus(error) !== 409 && !stopSignal.aborted) {
        report(new Error(`updating lease ${namespace}/${name} failed: ${ensureError(error).message}`));
      }
      return 'failed';
    }
  }

  function startLeading(acquiredAt: number): void {
    const controller = new AbortController();
    const work = Promise.resolve()
      .then(() => options.onStartedLeading(controller.signal))
      .catch(report);
    leading = { controller, renewedAt: acquiredAt, work };
    lastWork = work;
  }

  function stopLeading(): void {
    const ending = leading;
    if (!ending) return;
    leading = undefined;
    ending.controller.abort();
    try {
      options.onStoppedLeading?.();
    } catch (error) {
      report(error);
    }
  }

  async function lead(): Promise<void> {
    let lastOk = true;
    while (leading && !stopSignal.aborted) {
      const deadline = leading.renewedAt + renewDeadlineMs;
      // After a failure, retry no later than the deadline, so leadership ends on time, not a period late.
      await sleep(lastOk ? retryPeriodMs : Math.min(retryPeriodMs, Math.max(0, deadline - now())), stopSignal);
      if (!leading || stopSignal.aborted) return;
      const sentAt = now();
      if (sentAt >= deadline) {
        report(new Error(`could not renew lease ${namespace}/${name} within ${renewDeadlineMs} ms; giving up leadership`));
        stopLeading();
        return;
      }
      const result = await tryAcquireOrRenew(deadline);
      if (result === 'acquired') {
        // The send time, not the answer's: others may have seen the write as soon as it was sent.
        leading.renewedAt = sentAt;
        lastOk = true;
      } else if (result === 'held') {
        stopLeading();
        return;
      } else {
        lastOk = false;
      }
    }
  }

  async function campaign(): Promise<void> {
    try {
      while (!stopSignal.aborted) {
        const sentAt = now();
        const result = await tryAcquireOrRenew(sentAt + renewDeadlineMs);
        if (stopSignal.aborted) return;
        if (result === 'acquired') {
          startLeading(sentAt);
          await lead();
          continue;
        }
        // A little jitter so candidates that started together do not poll in lockstep.
        await sleep(retryPeriodMs * (1 + Math.random() * 0.2), stopSignal);
      }
    } finally {
      stopLeading();
    }
  }

  const running = campaign().catch(report);

  function isLeader(): boolean {
    // Checked on read as well: a blocked event loop must not keep answering yes past the deadline.
    return leading !== undefined && now() < leading.renewedAt + renewDeadlineMs;
  }

  async function stop(): Promise<void> {
    stopController.abort();
    await running;
  }

  async function release(): Promise<void> {
    await stop();
    // Let the leader's work wind down first, but not longer than it could have kept leading.
    const patience = new AbortController();
    await Promise.race([lastWork, sleep(renewDeadlineMs, patience.signal)]);
    patience.abort();
    const lease = lastLease;
    if (!lease || lease.spec?.holderIdentity !== identity) return;
    const time = new V1MicroTime();
    const body: V1Lease = {
      ...lease,
      // As client-go: no holder, a 1 s duration, so every candidate may take it at once.
      spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time },
    };
    try {
      await api.replaceNamespacedLease(
        { name, namespace, body },
        abortableRequest(AbortSignal.timeout(Math.ceil(renewDeadlineMs))),
      );
    } catch (error) {
      // 409: the lease changed since we last held it, so it is no longer ours to free.
      if (httpStatus(error) !== 409) {
        report(new Error(`releasing lease ${namespace}/${name} failed: ${ensureError(error).message}`));
      }
    }
  }

  return {
    isLeader,
    leader: () => {
      if (isLeader()) return identity;
      if (!observed || observed.holder === identity || expired(observed)) return undefined;
      return observed.holder;
    },
    stop,
    release,
  };
}
