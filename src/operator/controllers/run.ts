import { ensureError } from '../../common/errors.js';
import { projectOfRunId } from '../../common/ids.js';
import { cancelRun } from '../../engine/cancel.js';
import { TERMINAL_STATUSES, type RunRecord } from '../../store/types.js';
import { RUN, type Run, type Workflow } from '../api/generated.js';
import { keyOf } from '../kube/object-key.js';
import { httpStatus } from '../kube/request-options.js';
import type { ReconcileResult } from '../kube/work-queue.js';
import { CLUSTER_ENV, LABELS, runKey, workflowOf } from '../naming.js';
import type { PodTrouble } from '../passes/pod-trouble.js';
import type { EventTarget } from '../runs/events.js';
import { expiredRuns, type Expired } from '../runs/retention.js';
import { RunReconciler } from '../runs/run-reconciler.js';
import { isFinishedPhase } from '../runs/run-status.js';
import { isSettled } from '../runs/finished-run-summary.js';
import { runIdentity } from '../runs/store-born.js';
import { UnfinishedRunStates } from '../runs/unfinished-run-states.js';
import type { WorkflowCheckout } from '../workflow-checkout.js';
import type { ResolvedSource } from '../workflow-source.js';
import { queueKey, type ControllerContext } from './context.js';

/** The state the sweep compares a Run's with when its run is not among the store's unfinished ones. */
const NOT_UNFINISHED = 'finished, or not in the store';

export interface RunControllerOptions {
  /** What a run of that Workflow starts from (its script, and a pipeline's fan_out bodies). */
  source: (workflow: Workflow) => Promise<ResolvedSource>;
  /** The files of the Workflow's checkoutFrom, if it names one. */
  checkout: (workflow: Workflow) => Promise<WorkflowCheckout>;
  /** Seconds after it finished when a Run resource is deleted, unless its Workflow or itself says; null keeps them. */
  runTtlSeconds: number | null;
  /** The passes under way on this leader: a cancelled run's is ended. */
  passes(): { abortPass(runId: string): void; runsUnderWay(): string[] };
  /** How soon a Run not admitted yet looks again for its Workflow's script or checkout. */
  lookAgainMs: number;
  /** A Run was deleted: its artifacts go now rather than at the next minute's sweep. */
  artifactsGone: () => void;
  /** How often the sweep reads every unfinished run, not only those changed since its last read (every minute unless set). */
  fullSweepEveryMs?: number;
}

/**
 * Runs: a new Run is admitted as a run in the store and its status follows the store's record
 * (RunReconciler); a deleted Run cancels its run; a run born in the store (a Handler's, a
 * Schedule's, a child) gets a Run; finished Runs past their retention are deleted.
 */
export class RunController {
  private readonly reconciler: RunReconciler;
  /** Runs whose Run resource was deleted, until their cancellation is in the store: never mirrored again. */
  private readonly deletedRuns = new Set<string>();
  /** Every unfinished run's state in the store, read at a cost that follows what changed. */
  private readonly storeStates: UnfinishedRunStates;
  /** Per admitted unfinished run, its state in the store at the last sweep. */
  private readonly sweptStates = new Map<string, string>();
  /** Why the pod of a run's pass under way cannot start its script (the Run's PodReady condition). */
  private readonly podTroubles = new Map<string, PodTrouble>();
  /** Finished Runs that retention found expired at the last sweep, by queue key: their reconcile deletes them. */
  private expired = new Map<string, { uid: string | undefined; reason: string }>();

  constructor(
    private readonly context: ControllerContext,
    private readonly options: RunControllerOptions,
  ) {
    const { store, resources, events, metrics, log, now } = context;
    this.storeStates = new UnfinishedRunStates(store, `${CLUSTER_ENV}:`, options.fullSweepEveryMs);
    this.reconciler = new RunReconciler({
      store,
      resources,
      events,
      workflow: (namespace, name) => context.informers.workflows.get(namespace, name) ?? null,
      run: (namespace, name) => context.informers.runs.get(namespace, name) ?? null,
      source: options.source,
      checkout: options.checkout,
      now,
      poke: () => context.poke(),
      onPhase: (run) => {
        if (run.status === 'failed') metrics.runsFailed.inc({ namespace: run.project });
        if (!TERMINAL_STATUSES.includes(run.status)) return;
        const ended = run.finishedAt ?? now();
        log.info('run finished', {
          kind: 'Run', namespace: run.project, name: this.runResource(run.id)?.metadata.name, runId: run.id,
          phase: run.status, passes: run.passes, seconds: Math.round((ended.getTime() - run.createdAt.getTime()) / 1000), message: run.error ?? undefined,
        });
      },
      podTrouble: (runId) => this.podTroubles.get(runId),
      lookAgainMs: options.lookAgainMs,
    });
  }

  readonly handlers = {
    onAdd: (run: Run): void => this.context.enqueue('Run', run),
    onUpdate: (run: Run): void => this.context.enqueue('Run', run),
    onDelete: (run: Run): void => void this.deleted(run),
  };

  async reconcile(namespace: string | undefined, name: string): Promise<ReconcileResult | void> {
    const resource = this.context.informers.runs.get(namespace, name);
    // Another replica leads its shard; this one looks again if it comes to lead it (Controllers.lookAgain).
    if (resource && !this.context.ownsRun(RunReconciler.runIdOf(resource))) return;
    const key = `Run/${keyOf(namespace, name)}`;
    const expired = this.expired.get(key);
    if (resource && expired && expired.uid === resource.metadata.uid) {
      await this.deleteExpired(resource, expired.reason);
      this.expired.delete(key);
      return;
    }
    // A Run deleted since the cache saw it (its TTL, kubectl delete) has nothing left to update,
    // nor one whose run finished (and whose cached form is only its summary).
    if (resource && !isSettled(resource)) return this.reconciler.reconcile(resource).catch((error: unknown) => (httpStatus(error) === 404 ? undefined : Promise.reject(ensureError(error))));
  }

  /** The Run of a run changes when its run does (a pass started or ended, a pod in trouble). */
  enqueueRun(runId: string): void {
    const resource = this.runResource(runId);
    if (resource) this.context.enqueue('Run', resource);
  }

  /** Why a pass's pod cannot start its script, or null once it can: on its Run, and an Event. */
  podTroubleChanged(run: RunRecord, trouble: PodTrouble | null): void {
    if (trouble) this.podTroubles.set(run.id, trouble);
    else this.podTroubles.delete(run.id);
    this.enqueueRun(run.id);
    const target = this.eventTarget(run.id);
    // The summary, not the kubelet's text (which names a resolver's port that changes each time), so repeats aggregate.
    if (trouble && target) void this.context.events.record(target, 'Warning', trouble.reason, `pass ${run.passes}: ${trouble.summary}`).catch(() => undefined);
  }

  /** Why a run takes a pass more, where people look: the operator's log and an Event on its Run. */
  passLost(run: RunRecord, message: string): void {
    const target = this.eventTarget(run.id);
    this.context.log.error('pass lost; the run replays in a new pass', new Error(message), { kind: 'Run', namespace: run.project, name: target?.name, runId: run.id, pass: run.passes });
    if (target) void this.context.events.record(target, 'Warning', 'PassLost', message).catch(() => undefined);
  }

  /** One lookup in the cache's index by run id (controllers/index.ts), not a walk of every Run: it is asked at every pass. */
  runResource(runId: string): Run | undefined {
    return this.context.informers.runs.getByIndex(runId);
  }

  /**
   * The Run resource of a run, made now if the run began in the store (a handler's, a schedule's,
   * a child run): every run on the cluster is visible with `kubectl get runs`.
   */
  async ownerOf(run: RunRecord): Promise<{ name: string; uid: string }> {
    const { informers, resources } = this.context;
    const known = this.runResource(run.id);
    if (known?.metadata.uid) return { name: known.metadata.name ?? '', uid: known.metadata.uid };
    if (this.deletedRuns.has(run.id)) throw new Error(`the Run of ${run.id} was deleted; the run is being cancelled`);
    const identity = runIdentity(run, {
      handler: (namespace, name) => informers.handlers.get(namespace, name),
      schedule: (namespace, name) => informers.schedules.get(namespace, name),
      run: (runId) => this.runResource(runId),
    });
    // A rerun made through the API (the run page's Rerun) names its source as one made as a Run does.
    const source = run.rerunOf ? (this.runResource(run.rerunOf.runId)?.metadata.name ?? runKey(run.rerunOf.runId)) : null;
    const rerunOf = run.rerunOf && source ? { name: source, ...(run.rerunOf.fromStep ? { fromStep: run.rerunOf.fromStep } : {}) } : null;
    const labels = { ...identity.labels, ...(source && source.length <= 63 ? { [LABELS.rerunOf]: source } : {}) };
    const resource = (name: string): Run => ({
      apiVersion: 'hyperspool.dev/v1alpha1',
      kind: 'Run',
      metadata: { name, namespace: run.project, labels, ...(identity.ownerReferences.length ? { ownerReferences: identity.ownerReferences } : {}) },
      spec: { workflowRef: { name: workflowOf(run).name }, ...(run.input !== null && run.input !== undefined ? { input: run.input as never } : {}), ...(rerunOf ? { rerunOf } : {}) },
    });
    let created = await resources.create<Run>(RUN.plural, run.project, resource(identity.name));
    // A name taken by another run's Run (or by someone's own): this one goes by its key.
    if (created.metadata.labels?.[LABELS.run] !== runKey(run.id)) created = await resources.create<Run>(RUN.plural, run.project, resource(runKey(run.id)));
    return { name: created.metadata.name ?? '', uid: created.metadata.uid ?? '' };
  }

  /**
   * Unfinished Runs are compared with the store (a signal, an event or a timer may have moved
   * them), store-born runs get their Run resource, expired Runs are found, and the Run gauges set.
   */
  async sweep(): Promise<void> {
    const { metrics, store, informers } = this.context;
    // A Run is reconciled when its run changed since the last sweep (or finished, or left the
    // store), not every second. With a thousand Runs asleep, reconciling each every second (a read
    // of its whole record) kept the work queue full for good.
    const states = await this.storeStates.read();
    let swept = 0;
    const phases = new Map<string, Map<string, number>>();
    /** What retention reads: the finished Runs, and the children of a parent (which keep it). */
    const retained: Run[] = [];
    // A walk of the cache itself, allocating only for what changed: with 100,000 Runs, each one's
    // copies and strings made every second kept the heap growing (docs/scaling.md).
    for (const run of informers.runs.values()) {
      const runId = RunReconciler.runIdOf(run);
      // Each replica counts and compares the Runs of its own shards.
      if (!this.context.ownsRun(runId)) continue;
      const phase = run.status?.phase ?? 'Pending';
      const namespace = run.metadata.namespace ?? 'default';
      const counts = phases.get(namespace) ?? new Map<string, number>();
      phases.set(namespace, counts.set(phase, (counts.get(phase) ?? 0) + 1));
      if (isFinishedPhase(phase) || run.metadata.labels?.[LABELS.parent]) retained.push(run);
      if (isFinishedPhase(phase)) continue;
      // Not admitted yet (its Workflow, script or checkout still to come): its reconcile asked to look again.
      if (!run.metadata.labels?.[LABELS.run]) continue;
      const state = states.get(runId) ?? NOT_UNFINISHED;
      swept += 1;
      const before = this.sweptStates.get(runId);
      // Set even when equal: the text read from the store now, not a copy of it kept beside it.
      this.sweptStates.set(runId, state);
      if (before !== state) this.context.enqueue('Run', run);
    }
    // Kept in place, not made anew each second; what was not swept now (finished, deleted, another
    // replica's) leaves it, to be compared afresh if it comes back.
    if (this.sweptStates.size !== swept) for (const runId of this.sweptStates.keys()) if (!this.sweepable(runId)) this.sweptStates.delete(runId);
    // A namespace whose last Run went leaves no series behind.
    metrics.runs.reset();
    for (const [namespace, counts] of phases) {
      for (const phase of ['Pending', 'Running', 'Waiting', 'Succeeded', 'Failed', 'Cancelled']) metrics.runs.set({ namespace, phase }, counts.get(phase) ?? 0);
      // A counter's series must exist at 0 before its first increment: increase() over a series
      // that appears at 1 sees no increase, and the first failure of a namespace would never alert.
      metrics.runsFailed.inc({ namespace }, 0);
      metrics.passesLost.inc({ namespace }, 0);
    }
    this.countPodTroubles();
    this.findExpiredRuns(retained);
    // Unfinished store-born runs only: a run whose Run was deleted has been cancelled, and stays gone.
    for (const runId of states.keys()) {
      if (this.runResource(runId) || this.deletedRuns.has(runId) || !this.context.ownsRun(runId)) continue;
      const run = await store.getRun(runId);
      if (run && !TERMINAL_STATUSES.includes(run.status)) await this.ownerOf(run);
    }
    // A run cancelled through another replica (or by a pipeline's cancel-running) still has its pod here.
    const passes = this.options.passes();
    for (const runId of passes.runsUnderWay()) {
      const run = await store.getRun(runId);
      if (run && TERMINAL_STATUSES.includes(run.status)) passes.abortPass(runId);
    }
  }

  /** Whether the sweep compares this run's Run with the store: it is this replica's, admitted, unfinished. */
  private sweepable(runId: string): boolean {
    const run = this.runResource(runId);
    return Boolean(run && this.context.ownsRun(runId) && !isFinishedPhase(run.status?.phase) && run.metadata.labels?.[LABELS.run]);
  }

  private countPodTroubles(): void {
    const { metrics } = this.context;
    const notStarting = new Map<string, number>();
    for (const [runId, trouble] of this.podTroubles) {
      const key = JSON.stringify([projectOfRunId(runId), trouble.reason]);
      notStarting.set(key, (notStarting.get(key) ?? 0) + 1);
    }
    metrics.passPodsNotStarting.reset();
    for (const [key, count] of notStarting) {
      const [namespace = '', reason = ''] = JSON.parse(key) as string[];
      metrics.passPodsNotStarting.set({ namespace, reason }, count);
    }
  }

  /** `kubectl delete run` cancels the run (its Jobs go with it, through their owner reference). */
  private async deleted(resource: Run): Promise<void> {
    const runId = RunReconciler.runIdOf(resource);
    if (!this.context.ownsRun(runId)) return;
    this.deletedRuns.add(runId);
    try {
      const cancelled = await cancelRun(this.context.store, runId, this.context.now(), `its Run ${resource.metadata.name ?? ''} was deleted`);
      for (const id of cancelled) this.options.passes().abortPass(id);
      this.deletedRuns.delete(runId);
      // Its artifacts go now rather than at the next minute's sweep (which retries if this fails).
      this.options.artifactsGone();
    } catch (error) {
      this.context.log.error('cancelling the run of a deleted Run failed', error, { kind: 'Run', namespace: resource.metadata.namespace, name: resource.metadata.name, runId });
    }
  }

  /** The Run resource of a run, as an Event's object (undefined while it has none). */
  private eventTarget(runId: string): EventTarget | undefined {
    const resource = this.runResource(runId);
    const name = resource?.metadata.name;
    if (!resource || !name) return undefined;
    return { kind: 'Run', name, namespace: projectOfRunId(runId), ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}) };
  }

  /**
   * Finished Runs past their TTL or their trigger's history limit go (their runs stay in the
   * store), of `runs` (this replica's finished Runs, and the children that keep a parent): each
   * through the work queue, so a delete that fails is retried with backoff, counted and logged
   * once, not every sweep.
   */
  private findExpiredRuns(runs: readonly Run[]): void {
    const { informers } = this.context;
    const lookups = {
      workflow: (namespace: string, name: string) => informers.workflows.get(namespace, name),
      handler: (namespace: string, name: string) => informers.handlers.get(namespace, name),
      schedule: (namespace: string, name: string) => informers.schedules.get(namespace, name),
      defaultTtlSeconds: this.options.runTtlSeconds,
    };
    const found = expiredRuns(runs, lookups, this.context.now());
    this.expired = new Map(found.map(({ run, reason }) => [queueKey('Run', run), { uid: run.metadata.uid, reason }]));
    for (const { run } of found) this.context.nudge('Run', run);
  }

  private async deleteExpired(run: Expired['run'], reason: string): Promise<void> {
    const { namespace = 'default', name = '', uid } = run.metadata;
    await this.context.resources.delete(RUN.plural, namespace, name, uid);
    this.context.log.info('finished Run deleted', { kind: 'Run', namespace, name, runId: run.status?.runId, reason });
  }
}
