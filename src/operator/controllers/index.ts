import { CoreV1Api, CustomObjectsApi, BatchV1Api, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { jsonLogger, type Logger } from '../../common/json-log.js';
import { TerminalError } from '../../common/errors.js';
import type { Executor } from '../../passes/executor.js';
import type { ActivityAgentIdentity } from '../../server/context.js';
import type { RemotePasses } from '../../server/remote-passes.js';
import type { Store } from '../../store/store.js';
import { ACTIVITY_CLASS, GROUP, HANDLER, RUN, SCHEDULE, VERSION, WORKFLOW, type ActivityClass, type Handler, type Run, type Schedule, type Workflow } from '../api/generated.js';
import { untilItAnswers } from '../kube/backoff.js';
import { startInformer, type Informer, type ListQuery, type RelistReason } from '../kube/informer.js';
import type { OperatorMetrics } from '../kube/metrics.js';
import { splitKey } from '../kube/object-key.js';
import { failureOf } from '../kube/request-options.js';
import { createWorkQueue, type ReconcileResult, type WorkQueue } from '../kube/work-queue.js';
import { LABELS, MANAGED_BY } from '../naming.js';
import { clusterExecutor, type ClusterExecutor } from '../passes/cluster-executor.js';
import type { PassJobSettings } from '../passes/job-builder.js';
import type { WarmAssignments } from '../warm/assignments.js';
import { DEFAULT_WARM_PODS, WarmPools, type WarmPodSettings } from '../warm/warm-pools.js';
import { Resources } from '../resources.js';
import { startArchivePruner } from '../runs/archive-pruner.js';
import { startArtifactSweeper } from '../runs/artifact-sweeper.js';
import { EventRecorder } from '../runs/events.js';
import { runCacheForm } from '../runs/run-cache-form.js';
import { RunReconciler } from '../runs/run-reconciler.js';
import { TriggerReconciler } from '../triggers/trigger-reconciler.js';
import { checkoutBundle, withFanOutBodies } from '../fan-out-bodies.js';
import { workflowCheckout } from '../workflow-checkout.js';
import { configMapReader } from '../workflow-script.js';
import { resolveSource } from '../workflow-source.js';
import { ONE_SHARD, ownsClusterWide, ownsRun, shardFilter, type OwnedShards } from '../shards/owned-shards.js';
import { shardOfRun } from '../../store/run-shards.js';
import { ActivityClassController } from './activity-class.js';
import { queueKey, type ControllerContext, type Informers, type Kind } from './context.js';
import { HandlerController } from './handler.js';
import { RunController } from './run.js';
import { ScheduleController } from './schedule.js';
import { WorkflowController } from './workflow.js';
import { tracing } from '../../tracing/tracing.js';

export interface ControllersOptions {
  kubeConfig: KubeConfig;
  store: Store;
  passes: RemotePasses;
  /** Warm pods' agents waiting for their pass (the API's), which a pass due takes. */
  warm: WarmAssignments;
  /** The operator's bounds on warm pods (DEFAULT_WARM_PODS unless set). */
  warmPods?: WarmPodSettings;
  metrics: OperatorMetrics;
  jobs: PassJobSettings;
  /**
   * How often every unfinished Run is compared with the store and store-born runs get a Run
   * resource, and how soon what waits for a ConfigMap looks again (1 s unless set).
   */
  sweepMs?: number;
  /** How often the sweep reads every unfinished run, not only those changed since its last read (every minute unless set). */
  fullSweepEveryMs?: number;
  /** How long a ConfigMap read for a Workflow's scriptFrom is kept (5 s unless set). */
  configMapCacheMs?: number;
  resyncPeriodMs?: number;
  now?: () => Date;
  /** The operator's structured log (JSON lines on stderr unless given). */
  log?: Logger;
  /** Seconds after it finished when a Run resource is deleted, unless its Workflow or itself says; null keeps them. */
  runTtlSeconds?: number | null;
  /** Seconds after it finished when a run leaves the store (journal, logs, outputs); null keeps them. */
  archiveRetentionSeconds?: number | null;
  /** How often the archive's retention runs (hourly unless set). */
  archivePruneEveryMs?: number;
  /** How often artifacts of deleted Runs and past their Workflow's retention are swept (every minute unless set). */
  artifactSweepEveryMs?: number;
  /** How many passes run at once, in all namespaces (--max-running-passes; 16 unless set). */
  maxRunningPasses?: number;
  /** The shards of the runs this replica leads (src/operator/shards); one shard, all runs, unless set. */
  shards?: OwnedShards;
}

/**
 * What only the leader does, as controller-runtime shapes it: one controller per kind (./run.ts,
 * ./workflow.ts, ./handler.ts, ./schedule.ts, ./activity-class.ts), each with its informer
 * handlers, its reconcile and its part of the sweep. This file only wires them: the informers, the
 * work queue that hands each key to its kind's controller, the sweep's timer, and the executor
 * that starts passes as Jobs (../passes/cluster-executor.ts).
 */
export class Controllers {
  readonly executor: Executor;
  private readonly informers: Informers;
  private readonly queue: WorkQueue;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly cluster: ClusterExecutor;
  private readonly runs: RunController;
  private readonly warmPools: WarmPools;
  private readonly kinds: Record<Kind, { reconcile(namespace: string | undefined, name: string): Promise<ReconcileResult | void> }>;
  private sweeper: NodeJS.Timeout | null = null;
  /** The error of the sweep before, while sweeps fail: logged when it changes. */
  private sweepFailure: string | null = null;
  private pruner: { stop(): Promise<void> } | null = null;
  private artifactSweeper: { stop(): Promise<void>; poke(): void } | null = null;
  private stopped = false;
  /** When each pass under way started, for the oldest-running-pass gauge. */
  readonly passStarts = new Map<string, Date>();
  private readonly shards: OwnedShards;
  /** Shards led here whose previous leader's passes were recovered: the executor dispatches their runs. */
  private readonly ready = new Set<number>();
  private dispatching = false;

  constructor(private readonly options: ControllersOptions) {
    const { kubeConfig, store, metrics } = options;
    const shards = (this.shards = options.shards ?? ONE_SHARD);
    const log = (this.log = options.log ?? jsonLogger());
    const now = (this.now = options.now ?? (() => new Date()));
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const batch = kubeConfig.makeApiClient(BatchV1Api);

    this.queue = createWorkQueue({
      workers: 4,
      process: (key) => this.reconcile(key),
      // Bad input only a change of the object mends: not retried until the object changes.
      terminal: (error) => error instanceof TerminalError,
      onResult: (key, result) => metrics.reconciles.inc({ kind: key.slice(0, key.indexOf('/')), result }),
      // Every failure is counted and retried with per-key backoff; it is logged once per key
      // and distinct error (a Run retention may not delete would otherwise be a line a second).
      onError: (error, key, { attempt, delayMs, previous, terminal }) => {
        const [kind = '', namespace = '', name = ''] = key.split('/');
        const failure = failureOf(error);
        metrics.reconcileErrors.inc({ kind, namespace, reason: failure.reason });
        if (previous !== undefined && failureOf(previous).message === failure.message) return;
        log.error('reconcile failed', new Error(failure.message), { kind, namespace, name, attempt, ...(terminal ? {} : { retryInMs: delayMs }) });
      },
    });
    const caches = (): Informers => this.informers;
    const context: ControllerContext = {
      store,
      resources: new Resources(kubeConfig),
      events: new EventRecorder(core),
      metrics,
      log,
      now,
      // The handlers, reconciles and sweeps that read the caches run only once they are started below.
      get informers() {
        return caches();
      },
      enqueue: (kind, object) => this.queue.add(queueKey(kind, object)),
      nudge: (kind, object) => this.queue.nudge(queueKey(kind, object)),
      poke: () => this.executor.poke(),
      ownsRun: (runId) => ownsRun(shards, runId),
      ownsClusterWide: () => ownsClusterWide(shards),
    };

    const readConfigMap = configMapReader(core, options.configMapCacheMs);
    const workflow = (namespace: string, name: string): Workflow | null => this.informers.workflows.get(namespace, name) ?? null;
    const read = (of: Workflow) => resolveSource(of, readConfigMap);
    // A pipeline's fan_out bodies are Workflows or files of its checkoutFrom, read as the run starts and kept with it.
    const bundle = (of: Workflow) => checkoutBundle(of, readConfigMap);
    const source = async (of: Workflow) =>
      withFanOutBodies(of.metadata.namespace ?? 'default', await read(of), workflow, async (body) => ({ resolved: await read(body), bundle: bundle(body) }), bundle(of));
    // What no event tells of (a ConfigMap that appears, a tick in the store) is looked at this often.
    const lookAgainMs = options.sweepMs ?? 1000;
    const triggers = new TriggerReconciler({
      store,
      resources: context.resources,
      workflow,
      source,
      now,
      poke: context.poke,
      lookAgainMs,
      runName: (runId) => this.runs.runResource(runId)?.metadata.name ?? null,
      warn: (schedule, reason, message) => {
        const target = { kind: 'Schedule', name: schedule.metadata.name ?? '', namespace: schedule.metadata.namespace ?? 'default', uid: schedule.metadata.uid };
        void context.events.record(target, 'Warning', reason, message).catch(() => undefined);
      },
    });

    const runs = (this.runs = new RunController(context, {
      source,
      checkout: (w) => workflowCheckout(core, w),
      runTtlSeconds: options.runTtlSeconds ?? null,
      lookAgainMs,
      passes: () => this.executor,
      artifactsGone: () => this.artifactSweeper?.poke(),
      ...(options.fullSweepEveryMs ? { fullSweepEveryMs: options.fullSweepEveryMs } : {}),
    }));
    const workflows = new WorkflowController(context, readConfigMap, lookAgainMs);
    const handlers = new HandlerController(context, triggers);
    const schedules = new ScheduleController(context, triggers);
    const activityClasses = new ActivityClassController(context);
    this.kinds = { Run: runs, Workflow: workflows, Handler: handlers, Schedule: schedules };

    this.cluster = clusterExecutor({
      kubeConfig,
      store,
      passes: options.passes,
      jobs: options.jobs,
      metrics,
      log,
      now,
      ...(options.maxRunningPasses ? { maxRunningPasses: options.maxRunningPasses } : {}),
      ...(shards.count > 1 ? { shards: () => shardFilter(shards, shards.owned().filter((shard) => this.ready.has(shard))) } : {}),
      activityClasses,
      ownerOf: (run) => runs.ownerOf(run),
      takeWarmPod: async (run) => {
        // With shards, warm pods' agents ask shard 0's leader: any other takes an idle pod it has seen.
        const taken = await options.warm.take(run, shards.count > 1 ? () => this.informers.pods.list() : undefined);
        // The pool refills at once, not at the next sweep.
        if (taken) this.warmPools.refill();
        return taken;
      },
      storedWorkflow: async (namespace, name) => {
        const found = workflow(namespace, name);
        if (!found) return null;
        const resolved = await source(found);
        return resolved.ready ? resolved.source : { refusal: resolved.message };
      },
      runName: (runId) => runs.runResource(runId)?.metadata.name,
      onPassStarted: (run) => {
        this.passStarts.set(run.id, now());
        runs.enqueueRun(run.id);
      },
      onPassLost: (run, message) => runs.passLost(run, message),
      onPodTrouble: (run, trouble) => runs.podTroubleChanged(run, trouble),
      onPassEnd: (run) => {
        this.passStarts.delete(run.id);
        runs.enqueueRun(run.id);
      },
    });
    this.executor = this.cluster.executor;
    this.warmPools = new WarmPools({
      batch,
      settings: options.jobs,
      log,
      ...(options.warmPods ?? DEFAULT_WARM_PODS),
      workflows: () => this.informers.workflows.list(),
      jobs: () => this.informers.jobs.list(),
      pods: () => this.informers.pods.list(),
      running: () => options.passes.size,
      retire: (namespace, job) => options.warm.retire(namespace, job),
      isTaken: (namespace, job) => options.warm.isTaken(namespace, job),
      maxRunningPasses: options.maxRunningPasses ?? 16,
      now,
    });

    const resync = options.resyncPeriodMs ?? 5 * 60_000;
    const relisted = (kind: string) => ({ onRelist: (reason: RelistReason) => metrics.informerRelists.inc({ kind, reason }) });
    const custom$ = <T>({ kind, plural }: { kind: string; plural: string }) => ({
      kubeConfig,
      path: `/apis/${GROUP}/${VERSION}/${plural}`,
      list: async (query: ListQuery) => (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural, ...query })) as KubernetesListObject<T & { metadata?: object }> as never,
      resyncPeriodMs: resync,
      onError: (error: Error) => log.error('watch failed', error, { resource: `${plural}.${GROUP}` }),
      ...relisted(kind),
    });
    this.informers = {
      workflows: startInformer<Workflow>({ ...custom$<Workflow>(WORKFLOW), ...workflows.handlers }),
      runs: startInformer<Run>({
        ...custom$<Run>(RUN),
        ...runs.handlers,
        // An admitted Run is kept as the little its reconcile, retention and the lookups read (runs/run-cache-form.ts).
        slim: runCacheForm,
        index: (run) => RunReconciler.runIdOf(run),
      }),
      handlers: startInformer<Handler>({ ...custom$<Handler>(HANDLER), ...handlers.handlers }),
      schedules: startInformer<Schedule>({ ...custom$<Schedule>(SCHEDULE), ...schedules.handlers }),
      // Only to tell why a pass's pod cannot start (its waiting reason, or that no node can take it).
      pods: startInformer<V1Pod>({
        kubeConfig,
        path: '/api/v1/pods',
        labelSelector: `${LABELS.managedBy}=${MANAGED_BY}`,
        // A finished pod can no longer fail to start: the API server drops it from the watch.
        fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed',
        list: (query) => core.listPodForAllNamespaces(query),
        resyncPeriodMs: resync,
        onAdd: (pod) => this.cluster.podChanged(pod),
        onUpdate: (pod) => {
          this.cluster.podChanged(pod);
          // A warm pod whose agent asks here, assigned a pass by the leader of another shard.
          options.warm.podChanged(pod);
        },
        onError: (error) => log.error('watch failed', error, { resource: 'pods' }),
        ...relisted('Pod'),
      }),
      jobs: startInformer<V1Job>({
        kubeConfig,
        path: '/apis/batch/v1/jobs',
        labelSelector: `${LABELS.managedBy}=${MANAGED_BY}`,
        // A Job that ended has told its pass so; kept, it would only make the cache grow until its
        // TTL (the last pass's Job stays for kubectl logs; the others are deleted when they end).
        retain: (job) => !job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True'),
        list: (query) => batch.listJobForAllNamespaces(query),
        resyncPeriodMs: resync,
        onAdd: (job) => {
          this.warmPools.jobSeen(job);
          this.cluster.jobChanged(job);
        },
        onUpdate: (job) => {
          this.warmPools.jobSeen(job);
          this.cluster.jobChanged(job);
        },
        onDelete: (job) => {
          this.warmPools.jobSeen(job);
          this.cluster.jobChanged(job, true);
        },
        onError: (error) => log.error('watch failed', error, { resource: 'jobs.batch' }),
        ...relisted('Job'),
      }),
      // What activities may require, and the pods their attempts run in (cluster-scoped).
      activityClasses: startInformer<ActivityClass>({ ...custom$<ActivityClass>(ACTIVITY_CLASS), ...activityClasses.handlers }),
    };
  }

  /** Fills the caches; the work begins as shards are gained (shardGained), the first of them right after. */
  async start(): Promise<void> {
    for (const informer of this.caches()) await informer.waitForSync();
  }

  /**
   * This replica leads the shard now: the passes its previous leader had under way are made due
   * again (they replay), its runs are dispatched from then on, and its Runs looked at. Shard 0
   * brings the cluster-wide work: Workflows, Handlers, Schedules and the sweeps of artifacts and
   * the archive. With one shard, this is what becoming the leader always did.
   */
  async shardGained(shard: number, lost: AbortSignal): Promise<void> {
    const only = shardFilter(this.shards, [shard]);
    // A replica may come to lead while the database is away: until these land, nothing starts
    // (given up, this leader would hold the Lease and start no pass at all).
    let recovered: string[] = [];
    await untilItAnswers(
      async () => {
        // Passes that were under way when the previous leader went are dispatched again, and replay.
        recovered = await this.options.store.recoverInterruptedRuns(this.now(), undefined, only);
        // Attempts under way under the previous leader are tried again as new attempts (their Jobs
        // are ended then): a report from one of them no longer lands.
        await this.options.store.requeueRunningActivities(only);
      },
      {
        onFailure: (error, failedBefore) => {
          if (failedBefore === 0) this.log.error('recovering the passes of the previous leader failed; trying again until the database answers', error);
        },
        stopped: () => this.stopped || lost.aborted,
      },
    );
    if (this.stopped || lost.aborted) return;
    for (const id of recovered) {
      const run = await this.options.store.getRun(id).catch(() => null);
      if (run) this.runs.passLost(run, `pass ${run.passes} lost: the operator replica that ran it stopped leading`);
    }
    this.ready.add(shard);
    if (!this.dispatching) {
      this.dispatching = true;
      this.executor.start();
      this.sweep();
    } else {
      // Their Runs and, with shard 0, the cluster-wide kinds were passed over while another replica led them.
      this.lookAgain(shard);
      this.executor.poke();
    }
    if (shard === 0) this.startClusterWideSweeps();
  }

  /**
   * This replica no longer leads the shard (another does, or will once the Lease is free): its
   * passes under way here are left as they are, for the next leader to dispatch again, before the
   * Lease is given up.
   */
  async shardLost(shard: number): Promise<void> {
    this.ready.delete(shard);
    if (shard === 0) await this.stopClusterWideSweeps();
    await this.executor.abandonRuns((runId) => shardOfRun(runId, this.shards.count) === shard);
  }

  /** Every object of the shard goes through its reconcile again (shard 0: the cluster-wide kinds as well). */
  private lookAgain(shard: number): void {
    for (const run of this.informers.runs.list()) if (shardOfRun(RunReconciler.runIdOf(run), this.shards.count) === shard) this.queue.add(queueKey('Run', run));
    if (shard !== 0) return;
    for (const workflow of this.informers.workflows.list()) this.queue.add(queueKey('Workflow', workflow));
    for (const handler of this.informers.handlers.list()) this.queue.add(queueKey('Handler', handler));
    for (const schedule of this.informers.schedules.list()) this.queue.add(queueKey('Schedule', schedule));
  }

  private startClusterWideSweeps(): void {
    this.artifactSweeper = startArtifactSweeper({
      store: this.options.store,
      log: this.log,
      runResource: (runId) => this.runs.runResource(runId),
      workflow: (namespace, name) => this.informers.workflows.get(namespace, name),
      onDeletionFailed: (namespace) => this.options.metrics.artifactDeletionsFailed.inc({ namespace }),
      ...(this.options.artifactSweepEveryMs ? { everyMs: this.options.artifactSweepEveryMs } : {}),
      ...(this.options.now ? { now: this.options.now } : {}),
    });
    const retention = this.options.archiveRetentionSeconds;
    if (retention !== null && retention !== undefined) {
      this.pruner = startArchivePruner({ store: this.options.store, retentionMs: retention * 1000, log: this.log, ...(this.options.archivePruneEveryMs ? { everyMs: this.options.archivePruneEveryMs } : {}), ...(this.options.now ? { now: this.options.now } : {}) });
    }
  }

  private async stopClusterWideSweeps(): Promise<void> {
    await this.pruner?.stop();
    await this.artifactSweeper?.stop();
    this.pruner = null;
    this.artifactSweeper = null;
  }

  synced(): boolean {
    return this.caches().every((informer) => informer.hasSynced());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearTimeout(this.sweeper);
    await this.stopClusterWideSweeps();
    await this.warmPools.settled();
    await Promise.all(this.caches().map((informer) => informer.stop()));
    // Passes under way are left as they are: the next leader dispatches their runs again.
    await this.executor.abandon();
    await this.queue.shutdown();
  }

  poke(): void {
    this.executor.poke();
  }

  /** When the oldest pass under way started (for hyperspool_oldest_running_pass_seconds). */
  oldestPassStartedAt(): Date | undefined {
    let oldest: Date | undefined;
    for (const started of this.passStarts.values()) if (!oldest || started < oldest) oldest = started;
    return oldest;
  }

  abortPass(runId: string): void {
    this.executor.abortPass(runId);
  }

  /** The API recorded an activity attempt's result, which its pod reported. */
  activityReported(identity: ActivityAgentIdentity): void {
    this.cluster.activityReported(identity.runId, identity.name, identity.attempt);
  }

  private caches(): Informer<KubernetesObject>[] {
    return Object.values(this.informers) as Informer<KubernetesObject>[];
  }

  /** A key of the work queue, `Kind/namespace/name`, to the controller of its kind. */
  private async reconcile(key: string): Promise<ReconcileResult | void> {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash) as Kind;
    // Looked at again if this replica comes to lead shard 0 (lookAgain).
    if (kind !== 'Run' && !ownsClusterWide(this.shards)) return;
    const { namespace, name } = splitKey(key.slice(slash + 1));
    // Each reconcile its own span, with tracing on (docs/tracing.md).
    const traces = await tracing();
    const work = (): Promise<ReconcileResult | void> => this.kinds[kind].reconcile(namespace, name);
    return traces ? traces.reconcile(kind, namespace ?? '', name, work) : work();
  }

  /**
   * Every sweepMs: the Runs compared with the store, which no event tells of a change made through
   * another replica (RunController.sweep), and the gauges. What waits for a time of its own (a
   * wake, a tick, a ConfigMap) is not swept: its reconcile asked for its next look.
   */
  private sweep(): void {
    void this.sweepOnce()
      .then(() => {
        this.sweepFailure = null;
      })
      .catch((error: unknown) => {
        // Said once until the error changes: a database away fails every sweep, each second
        // (hyperspool_database_up says how long it lasts).
        const { message } = failureOf(error);
        if (message !== this.sweepFailure) this.log.error('sweep failed', new Error(message));
        this.sweepFailure = message;
      })
      .finally(() => {
        if (!this.stopped) this.sweeper = setTimeout(() => this.sweep(), this.options.sweepMs ?? 1000);
      });
  }

  private async sweepOnce(): Promise<void> {
    const { metrics } = this.options;
    // Warm pools are looked at as often (a Workflow edited, a pod gone, one past its time), by the
    // cluster-wide kinds' leader: shard 0's.
    if (this.ready.has(0)) this.warmPools.refill();
    try {
      await this.runs.sweep();
    } finally {
      metrics.queueDepth.set(this.queue.depth);
      for (const [resource, informer] of Object.entries(this.informers) as [string, Informer<KubernetesObject>][]) {
        const { whole, slim } = informer.counts();
        metrics.informerObjects.set({ resource }, whole + slim);
        metrics.informerSlimObjects.set({ resource }, slim);
      }
    }
  }
}
