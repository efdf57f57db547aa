import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { jsonLogger, type Logger } from '../common/json-log.js';
import { ensureError, TerminalError } from '../common/errors.js';
import { failureOf, httpStatus } from './kube/request-options.js';
import { untilItAnswers } from './kube/backoff.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cancelRun } from '../engine/cancel.js';
import { Executor } from '../executor/executor.js';
import { captureLog } from '../executor/log-capture.js';
import type { RemotePasses } from '../server/remote-passes.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type RunRecord } from '../store/types.js';
import { ACTIVITY_CLASS, GROUP, HANDLER, RUN, SCHEDULE, VERSION, WORKFLOW, type ActivityClass, type Handler, type Run, type Schedule, type Workflow } from './api/generated.js';
import { OFFERED_BY, offeredCapabilities, refusal } from './activities/activity-classes.js';
import { KubeActivities } from './activities/kube-activities.js';
import type { ActivityAgentIdentity } from '../server/context.js';
import { maxValueBytes } from '../engine/limits.js';
import { startInformer, type Informer } from './kube/informer.js';
import type { OperatorMetrics } from './kube/metrics.js';
import { objectKey, splitKey } from './kube/object-key.js';
import { createWorkQueue, type WorkQueue } from './kube/work-queue.js';
import { CLUSTER_ENV, LABELS, MANAGED_BY, passJobName, runKey, workflowOf } from './naming.js';
import { KubePasses } from './passes/kube-passes.js';
import type { PodTrouble } from './passes/pod-trouble.js';
import type { PassJobSettings } from './passes/job-builder.js';
import { Resources } from './resources.js';
import { EventRecorder, type EventTarget } from './runs/events.js';
import { RunReconciler } from './runs/run-reconciler.js';
import { isFinishedPhase } from './runs/run-status.js';
import { runIdentity } from './runs/store-born.js';
import { expiredRuns, type Expired } from './runs/retention.js';
import { startArchivePruner } from './runs/archive-pruner.js';
import { startArtifactSweeper } from './runs/artifact-sweeper.js';
import { TriggerReconciler } from './triggers/trigger-reconciler.js';
import { writeReady } from './ready-condition.js';
import { resolveSource, workflowReadiness } from './workflow-source.js';
import { checkoutBundle, withFanOutBodies } from './fan-out-bodies.js';
import { passQuotaReader, PASS_QUOTA_ANNOTATION } from './passes/pass-quota.js';
import { workflowCheckout } from './workflow-checkout.js';
import { configMapReader, workflowScript, type ReadConfigMap } from './workflow-script.js';
import { projectOfRunId } from '../common/ids.js';

export interface ControllersOptions {
  kubeConfig: KubeConfig;
  store: Store;
  passes: RemotePasses;
  metrics: OperatorMetrics;
  jobs: PassJobSettings;
  /** How often every unfinished Run is compared with the store, and store-born runs get a Run resource. */
  sweepMs?: number;
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
}

type Kind = 'Run' | 'Handler' | 'Schedule' | 'Workflow';

/** An object's key in the work queue: `Kind/namespace/name`. */
const queueKey = (kind: Kind, object: KubernetesObject): string => `${kind}/${objectKey(object)}`;

/**
 * What only the leader does: watch the hyperspool.dev resources and the passes' Jobs, reconcile
 * them with the store, and run the executor that starts passes as Jobs.
 */
export class Controllers {
  readonly executor: Executor;
  private readonly informers: {
    workflows: Informer<Workflow>;
    runs: Informer<Run>;
    handlers: Informer<Handler>;
    schedules: Informer<Schedule>;
    pods: Informer<V1Pod>;
    jobs: Informer<V1Job>;
    activityClasses: Informer<ActivityClass>;
  };
  private readonly queue: WorkQueue;
  private readonly log: Logger;
  private readonly events: EventRecorder;
  private readonly runs: RunReconciler;
  private readonly triggers: TriggerReconciler;
  private readonly resources: Resources;
  private readonly kubePasses: KubePasses;
  private readonly kubeActivities: KubeActivities;
  private sweeper: NodeJS.Timeout | null = null;
  /** The error of the sweep before, while sweeps fail: logged when it changes. */
  private sweepFailure: string | null = null;
  private pruner: { stop(): Promise<void> } | null = null;
  private artifactSweeper: { stop(): Promise<void>; poke(): void } | null = null;
  private stopped = false;
  /** Runs whose Run resource was deleted, until their cancellation is in the store: never mirrored again. */
  private readonly deletedRuns = new Set<string>();
  /** Per admitted unfinished run, its state in the store at the last sweep (sweepOnce). */
  private sweptStates = new Map<string, string>();
  /** When each pass under way started, for the oldest-running-pass gauge. */
  readonly passStarts = new Map<string, Date>();
  /** Why the pod of a run's pass under way cannot start its script (the Run's PodReady condition). */
  private readonly podTroubles = new Map<string, PodTrouble>();
  private readonly readConfigMap: ReadConfigMap;
  /** The script each scriptFrom Workflow was last read with: an edited ConfigMap reaches its Handlers too. */
  private readonly scriptsRead = new Map<string, string>();
  /** Finished Runs that retention found expired at the last sweep, by queue key: their reconcile deletes them. */
  private expired = new Map<string, { uid: string | undefined; reason: string }>();

  constructor(private readonly options: ControllersOptions) {
    const { kubeConfig, store, metrics } = options;
    const log = (this.log = options.log ?? jsonLogger());
    const now = options.now ?? (() => new Date());
    this.resources = new Resources(kubeConfig);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const batch = kubeConfig.makeApiClient(BatchV1Api);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    this.events = new EventRecorder(core);
    const workflow = (namespace: string, name: string): Workflow | null => this.informers.workflows.get(namespace, name) ?? null;
    const poke = (): void => this.executor.poke();
    this.readConfigMap = configMapReader(core, options.configMapCacheMs);
    const read = (of: Workflow) => resolveSource(of, this.readConfigMap);
    // A pipeline's fan_out bodies are Workflows or files of its checkoutFrom, read as the run starts and kept with it.
    const bundle = (of: Workflow) => checkoutBundle(of, this.readConfigMap);
    const source = async (of: Workflow) =>
      withFanOutBodies(of.metadata.namespace ?? 'default', await read(of), workflow, async (body) => ({ resolved: await read(body), bundle: bundle(body) }), bundle(of));

    this.queue = createWorkQueue({
      workers: 4,
      process: (key) => this.reconcile(key),
      // Bad input only a change of the object mends: not retried until the object changes.
      terminal: (error) => error instanceof TerminalError,
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
    this.runs = new RunReconciler({
      store,
      resources: this.resources,
      events: this.events,
      workflow,
      source,
      checkout: (w) => workflowCheckout(core, w),
      now,
      poke,
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
    });
    this.triggers = new TriggerReconciler({ store, resources: this.resources, workflow, source, now, poke });
    this.kubePasses = new KubePasses({
      store,
      passes: options.passes,
      batch,
      settings: options.jobs,
      ownerOf: (run) => this.ownerOf(run),
      onScriptStarting: (seconds) => metrics.passStartLatency.observe(seconds),
      onPassStarted: (run) => {
        metrics.passesStarted.inc({ namespace: run.project });
        log.info('pass dispatched', { kind: 'Run', namespace: run.project, name: this.runResource(run.id)?.metadata.name, runId: run.id, pass: run.passes, job: passJobName(run.id, run.passes) });
        this.passStarts.set(run.id, now());
        this.enqueueRun(run.id);
      },
      onPassLost: (run, message) => {
        metrics.passesLost.inc({ namespace: run.project });
        this.passLost(run, message);
      },
      onPodTrouble: (run, trouble) => {
        if (trouble) this.podTroubles.set(run.id, trouble);
        else this.podTroubles.delete(run.id);
        this.enqueueRun(run.id);
        const target = this.runEventTarget(run.id);
        if (trouble && target) void this.events.record(target, 'Warning', trouble.reason, `pass ${run.passes}: ${trouble.message}`).catch(() => undefined);
      },
    });
    // Each activity attempt is a Job of its own, shaped by the ActivityClass offering what it requires.
    this.kubeActivities = new KubeActivities({
      store,
      batch,
      settings: options.jobs,
      maxResultBytes: maxValueBytes(),
      classes: () => this.informers.activityClasses.list(),
      ownerOf: (run) => this.ownerOf(run),
      onAttemptStarted: (activity, job) => log.info('activity attempt dispatched', { runId: activity.runId, activity: activity.name, attempt: activity.attempt, job }),
    });
    this.executor = new Executor(store, {
      // Only pipeline coordinators run here (scripts run in pods, which send their own output):
      // what a coordinator prints goes to its run's log, as on spool dev.
      output: (run) => captureLog(store, join(tmpdir(), 'hyperspool-logs'), run),
      runPass: this.kubePasses.runPass,
      runActivity: this.kubeActivities.runActivity,
      capabilities: () => offeredCapabilities(this.informers.activityClasses.list()),
      capabilitiesOfferedBy: OFFERED_BY,
      activityRefusal: (requires) => refusal(this.informers.activityClasses.list(), requires),
      noWorkflowFiles: 'on a cluster a fan_out body is a Workflow, by name; none was pinned with this run',
      schedules: true,
      maxConcurrentPasses: options.maxRunningPasses ?? 16,
      passQuota: passQuotaReader(core, (namespace, value) =>
        log.error('ignoring a pass quota that is not a whole number of at least 1', new Error(`${PASS_QUOTA_ANNOTATION}: '${value}'`), { kind: 'Namespace', name: namespace }),
      ),
      env: CLUSTER_ENV,
      now,
      onError: (message, error, runId) => log.error(message, error, { runId }),
      onPassEnd: (run) => {
        this.passStarts.delete(run.id);
        this.enqueueRun(run.id);
      },
    });

    const resync = options.resyncPeriodMs ?? 5 * 60_000;
    const custom$ = <T>(plural: string) => ({
      kubeConfig,
      path: `/apis/${GROUP}/${VERSION}/${plural}`,
      list: async () => (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural })) as KubernetesListObject<T & { metadata?: object }> as never,
      resyncPeriodMs: resync,
      onError: (error: Error) => log.error('watch failed', error, { resource: `${plural}.${GROUP}` }),
    });
    const enqueue = (kind: Kind) => (object: KubernetesObject) => this.enqueue(kind, object);
    this.informers = {
      workflows: startInformer<Workflow>({
        ...custom$<Workflow>(WORKFLOW.plural),
        onAdd: (w) => this.workflowChanged(w),
        onUpdate: (w) => this.workflowChanged(w),
        onDelete: (w) => this.scriptsRead.delete(objectKey(w)),
      }),
      runs: startInformer<Run>({
        ...custom$<Run>(RUN.plural),
        onAdd: enqueue('Run'),
        onUpdate: enqueue('Run'),
        onDelete: (run) => void this.runDeleted(run),
      }),
      handlers: startInformer<Handler>({
        ...custom$<Handler>(HANDLER.plural),
        onAdd: enqueue('Handler'),
        onUpdate: enqueue('Handler'),
        onDelete: (h) => void this.triggers.deleted('Handler', h.metadata.namespace ?? 'default', h.metadata.name ?? ''),
      }),
      schedules: startInformer<Schedule>({
        ...custom$<Schedule>(SCHEDULE.plural),
        onAdd: enqueue('Schedule'),
        onUpdate: enqueue('Schedule'),
        onDelete: (s) => void this.triggers.deleted('Schedule', s.metadata.namespace ?? 'default', s.metadata.name ?? ''),
      }),
      // Only to tell why a pass's pod cannot start (its waiting reason, or that no node can take it).
      pods: startInformer<V1Pod>({
        kubeConfig,
        path: '/api/v1/pods',
        labelSelector: `${LABELS.managedBy}=${MANAGED_BY}`,
        // A finished pod can no longer fail to start: the API server drops it from the watch.
        fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed',
        list: (query) => core.listPodForAllNamespaces(query),
        resyncPeriodMs: resync,
        onAdd: (pod) => this.podChanged(pod),
        onUpdate: (pod) => this.podChanged(pod),
        onError: (error) => log.error('watch failed', error, { resource: 'pods' }),
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
        onAdd: (job) => this.jobChanged(job),
        onUpdate: (job) => this.jobChanged(job),
        onDelete: (job) => {
          this.kubePasses.jobChanged(job, true);
          this.kubeActivities.jobChanged(job, true);
        },
        onError: (error) => log.error('watch failed', error, { resource: 'jobs.batch' }),
      }),
      // What activities may require, and the pods their attempts run in (cluster-scoped).
      activityClasses: startInformer<ActivityClass>({ ...custom$<ActivityClass>(ACTIVITY_CLASS.plural), onAdd: poke, onUpdate: poke }),
    };
  }

  async start(): Promise<void> {
    for (const informer of Object.values(this.informers)) await informer.waitForSync();
    // A replica may come to lead while the database is away: until these land, nothing starts
    // (given up, this leader would hold the Lease and start no pass at all).
    let recovered: string[] = [];
    await untilItAnswers(
      async () => {
        // Passes that were under way when the previous leader went are dispatched again, and replay.
        recovered = await this.options.store.recoverInterruptedRuns((this.options.now ?? (() => new Date()))());
        // Attempts under way under the previous leader are tried again as new attempts (their Jobs
        // are ended then): a report from one of them no longer lands.
        await this.options.store.requeueRunningActivities();
      },
      {
        onFailure: (error, failedBefore) => {
          if (failedBefore === 0) this.log.error('recovering the passes of the previous leader failed; trying again until the database answers', error);
        },
        stopped: () => this.stopped,
      },
    );
    if (this.stopped) return;
    for (const id of recovered) {
      const run = await this.options.store.getRun(id).catch(() => null);
      if (run) this.passLost(run, `pass ${run.passes} lost: the operator replica that ran it stopped leading`);
    }
    this.executor.start();
    this.sweep();
    this.artifactSweeper = startArtifactSweeper({
      store: this.options.store,
      log: this.log,
      runResource: (runId) => this.runResource(runId),
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

  synced(): boolean {
    return Object.values(this.informers).every((informer) => informer.hasSynced());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearTimeout(this.sweeper);
    await this.pruner?.stop();
    await this.artifactSweeper?.stop();
    await Promise.all(Object.values(this.informers).map((informer) => informer.stop()));
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
    this.kubeActivities.reported(identity.runId, identity.name, identity.attempt);
  }

  private podChanged(pod: V1Pod): void {
    this.kubePasses.podChanged(pod);
    this.kubeActivities.podChanged(pod);
  }

  private jobChanged(job: V1Job): void {
    this.kubePasses.jobChanged(job);
    this.kubeActivities.jobChanged(job);
  }

  private async reconcile(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash) as Kind;
    this.options.metrics.reconciles.inc({ kind });
    const { namespace, name } = splitKey(key.slice(slash + 1));
    if (kind === 'Run') {
      const resource = this.informers.runs.get(namespace, name);
      const expired = this.expired.get(key);
      if (resource && expired && expired.uid === resource.metadata.uid) {
        await this.deleteExpired(resource, expired.reason);
        this.expired.delete(key);
        return;
      }
      // A Run deleted since the cache saw it (its TTL, kubectl delete) has nothing left to update.
      if (resource) await this.runs.reconcile(resource).catch((error: unknown) => (httpStatus(error) === 404 ? undefined : Promise.reject(ensureError(error))));
    } else if (kind === 'Handler') {
      const resource = this.informers.handlers.get(namespace, name);
      if (resource) await this.triggers.reconcileHandler(resource);
    } else if (kind === 'Schedule') {
      const resource = this.informers.schedules.get(namespace, name);
      if (resource) await this.triggers.reconcileSchedule(resource);
    } else {
      const resource = this.informers.workflows.get(namespace, name);
      if (resource) await this.reconcileWorkflow(resource);
    }
  }

  private async reconcileWorkflow(workflow: Workflow): Promise<void> {
    const script = await workflowScript(workflow, this.readConfigMap);
    await writeReady(this.resources, WORKFLOW.plural, workflow, workflowReadiness(workflow, script));
    if (!workflow.spec.scriptFrom) return;
    // A ConfigMap edited in place (no hash suffix) changes no Workflow, so no informer event tells
    // the Handlers and Schedules of it: they look again when the script read differs.
    const key = objectKey(workflow);
    const text = script.ok ? script.script : '';
    if (this.scriptsRead.has(key) && this.scriptsRead.get(key) !== text) this.dependentsLookAgain(workflow);
    this.scriptsRead.set(key, text);
  }

  /** Triggers and waiting Runs that name a Workflow look again when it appears or changes. */
  private workflowChanged(workflow: Workflow): void {
    this.enqueue('Workflow', workflow);
    this.dependentsLookAgain(workflow);
  }

  private dependentsLookAgain(workflow: Workflow): void {
    const namespace = workflow.metadata.namespace;
    const name = workflow.metadata.name;
    const refers = (object: { spec: { workflowRef: { name: string } } }): boolean => object.spec.workflowRef.name === name;
    for (const handler of this.informers.handlers.list(namespace).filter(refers)) this.enqueue('Handler', handler);
    for (const schedule of this.informers.schedules.list(namespace).filter(refers)) this.enqueue('Schedule', schedule);
    for (const run of this.informers.runs.list(namespace).filter(refers)) if (!run.status?.runId || run.status.phase === 'Pending') this.enqueue('Run', run);
  }

  /** `kubectl delete run` cancels the run (its Jobs go with it, through their owner reference). */
  private async runDeleted(resource: Run): Promise<void> {
    const now = (this.options.now ?? (() => new Date()))();
    const runId = RunReconciler.runIdOf(resource);
    this.deletedRuns.add(runId);
    try {
      const cancelled = await cancelRun(this.options.store, runId, now, `its Run ${resource.metadata.name ?? ''} was deleted`);
      for (const id of cancelled) this.executor.abortPass(id);
      this.deletedRuns.delete(runId);
      // Its artifacts go now rather than at the next minute's sweep (which retries if this fails).
      this.artifactSweeper?.poke();
    } catch (error) {
      this.log.error('cancelling the run of a deleted Run failed', error, { kind: 'Run', namespace: resource.metadata.namespace, name: resource.metadata.name, runId });
    }
  }

  /** Why a run takes a pass more, where people look: the operator's log and an Event on its Run. */
  private passLost(run: RunRecord, message: string): void {
    const target = this.runEventTarget(run.id);
    this.log.error('pass lost; the run replays in a new pass', new Error(message), { kind: 'Run', namespace: run.project, name: target?.name, runId: run.id, pass: run.passes });
    if (target) void this.events.record(target, 'Warning', 'PassLost', message).catch(() => undefined);
  }

  /** The Run resource of a run, as an Event's object (undefined while it has none). */
  private runEventTarget(runId: string): EventTarget | undefined {
    const resource = this.runResource(runId);
    const name = resource?.metadata.name;
    if (!resource || !name) return undefined;
    return { kind: 'Run', name, namespace: projectOfRunId(runId), ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}) };
  }

  private runResource(runId: string): Run | undefined {
    const namespace = projectOfRunId(runId);
    const key = runKey(runId);
    return this.informers.runs.list(namespace).find((run) => run.metadata.labels?.[LABELS.run] === key || RunReconciler.runIdOf(run) === runId);
  }

  private enqueue(kind: Kind, object: KubernetesObject): void {
    this.queue.add(queueKey(kind, object));
  }

  /** enqueue, for a sweep's look: a key failing meanwhile keeps its backoff. */
  private nudge(kind: Kind, object: KubernetesObject): void {
    this.queue.nudge(queueKey(kind, object));
  }

  private enqueueRun(runId: string): void {
    const resource = this.runResource(runId);
    if (resource) this.enqueue('Run', resource);
  }

  /**
   * The Run resource of a run, made now if the run began in the store (a handler's, a schedule's,
   * a child run): every run on the cluster is visible with `kubectl get runs`.
   */
  private async ownerOf(run: RunRecord): Promise<{ name: string; uid: string }> {
    const known = this.runResource(run.id);
    if (known?.metadata.uid) return { name: known.metadata.name ?? '', uid: known.metadata.uid };
    if (this.deletedRuns.has(run.id)) throw new Error(`the Run of ${run.id} was deleted; the run is being cancelled`);
    const identity = runIdentity(run, {
      handler: (namespace, name) => this.informers.handlers.get(namespace, name),
      schedule: (namespace, name) => this.informers.schedules.get(namespace, name),
      run: (runId) => this.runResource(runId),
    });
    const resource = (name: string): Run => ({
      apiVersion: 'hyperspool.dev/v1alpha1',
      kind: 'Run',
      metadata: { name, namespace: run.project, labels: identity.labels, ...(identity.ownerReferences.length ? { ownerReferences: identity.ownerReferences } : {}) },
      spec: { workflowRef: { name: workflowOf(run).name }, ...(run.input !== null && run.input !== undefined ? { input: run.input as never } : {}) },
    });
    let created = await this.resources.create<Run>(RUN.plural, run.project, resource(identity.name));
    // A name taken by another run's Run (or by someone's own): this one goes by its key.
    if (created.metadata.labels?.[LABELS.run] !== runKey(run.id)) created = await this.resources.create<Run>(RUN.plural, run.project, resource(runKey(run.id)));
    return { name: created.metadata.name ?? '', uid: created.metadata.uid ?? '' };
  }

  /**
   * Finished Runs past their TTL or their trigger's history limit go (their runs stay in the
   * store): each through the work queue, so a delete that fails is retried with backoff, counted
   * and logged once, not every sweep.
   */
  private findExpiredRuns(): void {
    const lookups = {
      workflow: (namespace: string, name: string) => this.informers.workflows.get(namespace, name),
      handler: (namespace: string, name: string) => this.informers.handlers.get(namespace, name),
      schedule: (namespace: string, name: string) => this.informers.schedules.get(namespace, name),
      defaultTtlSeconds: this.options.runTtlSeconds === undefined ? null : this.options.runTtlSeconds,
    };
    const now = (this.options.now ?? (() => new Date()))();
    const expired = new Map<string, { uid: string | undefined; reason: string }>();
    for (const { run, reason } of expiredRuns(this.informers.runs.list(), lookups, now)) expired.set(queueKey('Run', run), { uid: run.metadata.uid, reason });
    this.expired = expired;
    for (const key of expired.keys()) this.queue.nudge(key);
  }

  private async deleteExpired(run: Expired['run'], reason: string): Promise<void> {
    const { namespace = 'default', name = '', uid } = run.metadata;
    await this.resources.delete(RUN.plural, namespace, name, uid);
    this.log.info('finished Run deleted', { kind: 'Run', namespace, name, runId: run.status?.runId, reason });
  }

  /**
   * Every few seconds: unfinished Runs are compared with the store (a signal, an event or a timer
   * may have moved them), store-born runs get their Run resource, and the gauges are set.
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
    const { metrics, store } = this.options;
    // One light query for every unfinished run: a Run is reconciled when its run changed since the
    // last sweep (or finished, or left the store), not every second. With a thousand Runs asleep,
    // reconciling each every second (a read of its whole record) kept the work queue full for good.
    const states = new Map((await store.listUnfinishedRunStates(`${CLUSTER_ENV}:`)).map((state) => [state.id, JSON.stringify(state)]));
    const swept = new Map<string, string>();
    const withResource = new Set<string>();
    const phases = new Map<string, Map<string, number>>();
    for (const run of this.informers.runs.list()) {
      const phase = run.status?.phase ?? 'Pending';
      const namespace = run.metadata.namespace ?? 'default';
      const counts = phases.get(namespace) ?? new Map<string, number>();
      phases.set(namespace, counts.set(phase, (counts.get(phase) ?? 0) + 1));
      const runId = RunReconciler.runIdOf(run);
      withResource.add(runId);
      if (isFinishedPhase(phase)) continue;
      // Not admitted yet (its Workflow, script or checkout still to come): it looks again every sweep.
      if (!run.metadata.labels?.[LABELS.run]) {
        this.nudge('Run', run);
        continue;
      }
      const state = states.get(runId) ?? 'finished, or not in the store';
      swept.set(runId, state);
      if (this.sweptStates.get(runId) !== state) this.enqueue('Run', run);
    }
    this.sweptStates = swept;
    // A namespace whose last Run went leaves no series behind.
    metrics.runs.reset();
    for (const [namespace, counts] of phases) {
      for (const phase of ['Pending', 'Running', 'Waiting', 'Succeeded', 'Failed', 'Cancelled']) metrics.runs.set({ namespace, phase }, counts.get(phase) ?? 0);
      // A counter's series must exist at 0 before its first increment: increase() over a series
      // that appears at 1 sees no increase, and the first failure of a namespace would never alert.
      metrics.runsFailed.inc({ namespace }, 0);
      metrics.passesLost.inc({ namespace }, 0);
    }
    metrics.queueDepth.set(this.queue.depth);
    for (const [resource, informer] of Object.entries(this.informers)) metrics.informerObjects.set({ resource }, informer.list().length);
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
    for (const schedule of this.informers.schedules.list()) this.nudge('Schedule', schedule);
    this.findExpiredRuns();
    // Nothing tells the operator that a ConfigMap appeared or changed: it reads again (cached).
    for (const workflow of this.informers.workflows.list()) if (workflow.spec.scriptFrom) this.nudge('Workflow', workflow);
    // Unfinished store-born runs only: a run whose Run was deleted has been cancelled, and stays gone.
    for (const runId of states.keys()) {
      if (withResource.has(runId) || this.deletedRuns.has(runId)) continue;
      const run = await store.getRun(runId);
      if (run && !TERMINAL_STATUSES.includes(run.status)) await this.ownerOf(run);
    }
    // A run cancelled through another replica (or by a pipeline's cancel-running) still has its pod here.
    for (const runId of this.executor.runsUnderWay()) {
      const run = await store.getRun(runId);
      if (run && TERMINAL_STATUSES.includes(run.status)) this.executor.abortPass(runId);
    }
  }
}
