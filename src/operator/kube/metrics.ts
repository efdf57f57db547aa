import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The operator's Prometheus metrics. They live in a Registry of their own rather than prom-client's
 * global one so that two operators in one process (tests) do not share counters, and so a library
 * we load cannot slip its metrics into our /metrics.
 */
export interface OperatorMetrics {
  readonly registry: Registry;
  /**
   * Run resources by namespace and phase; the leader sets every phase (0 included) of each
   * namespace it has runs in, so series do not vanish. Leader only.
   */
  readonly runs: Gauge<'namespace' | 'phase'>;
  readonly runsFailed: Counter<'namespace'>;
  readonly passesStarted: Counter<'namespace'>;
  /** From a run becoming due (woken, submitted) to its pass's script starting. */
  readonly passStartLatency: Histogram;
  readonly journalWrite: Histogram;
  readonly queueDepth: Gauge;
  /** Objects in each of the leader's informer caches (what its memory grows with). Leader only. */
  readonly informerObjects: Gauge<'resource'>;
  /** Of those, the objects cached only as their summary (a finished Run: what retention reads). Leader only. */
  readonly informerSlimObjects: Gauge<'resource'>;
  /**
   * Reconciles done, by kind and how each ended (`success`, `requeue`: asked to look again later,
   * `error`: retried with backoff, `terminal`: bad input written to status, not retried): how
   * much work the leader's queue does (a sweep that finds no change adds none).
   */
  readonly reconciles: Counter<'kind' | 'result'>;
  /** Lists each informer made, by kind and why (`start`, `resync`, `expired`: a 410, `error`): what the informers heal. */
  readonly informerRelists: Counter<'kind' | 'reason'>;
  /**
   * Reconcile failures by kind (`Run`, `Schedule`, ...), the object's namespace and why: the API
   * server's reason (`Forbidden`, `Conflict`...) or the error's class (`UnavailableError`).
   */
  readonly reconcileErrors: Counter<'kind' | 'namespace' | 'reason'>;
  /** 1 on the replica holding the lease, 0 elsewhere: alerts want exactly one. */
  readonly isLeader: Gauge;
  readonly shardsOwned: Gauge;
  readonly buildInfo: Gauge<'version'>;
  /** Age of the longest-running pass: a stuck pass shows here before anyone complains. */
  readonly oldestRunningPass: Gauge;
  /** Passes whose pod ended without its agent's report (deleted, evicted, OOM-killed, node lost). */
  readonly passesLost: Counter<'namespace'>;
  /** Pass pods that cannot start their script, by the kubelet's or scheduler's reason. Leader only. */
  readonly passPodsNotStarting: Gauge<'namespace' | 'reason'>;
  /** Runs whose artifacts the sweep could not delete (storage away): tried again each sweep. */
  readonly artifactDeletionsFailed: Counter<'namespace'>;
  /**
   * Clears what only the leader knows (runs by phase, queue depth, the oldest pass): a replica
   * that stops leading reports none of them rather than the numbers it had when it led.
   */
  forgetLeaderOnly(): void;
  /** The exposition text for /metrics. */
  metricsText(): Promise<string>;
  /** The Content-Type to serve `metricsText()` with. */
  readonly contentType: string;
}

export interface MetricsOptions {
  /** The operator's version, for `hyperspool_build_info{version}`. */
  version: string;
  /** Node process metrics (CPU, memory, event loop lag, GC), prefixed `hyperspool_`. On unless false. */
  processMetrics?: boolean;
  /**
   * Read at each scrape for `hyperspool_oldest_running_pass_seconds`, so the age is current
   * rather than as old as the last reconcile. Answers the start time of the oldest running pass,
   * or undefined when none runs. Without it, the operator sets the gauge itself.
   */
  oldestRunningPassStartedAt?: () => Date | undefined;
  /**
   * Read at each scrape for `hyperspool_database_up`: answers whether PostgreSQL answered a query.
   * Every replica asks on its own, so one cut off from the database says so even if others are not.
   */
  databaseUp?: () => Promise<boolean>;
  /**
   * Read at each scrape for `hyperspool_oldest_open_wait_seconds`: since when the oldest open-ended
   * wait of each namespace has lasted (a wait with no timeout, or past its wake time). From the
   * database, so every replica reports the same.
   */
  openWaitsSince?: () => Promise<{ namespace: string; since: Date }[]>;
  /** Read at each scrape for `hyperspool_warm_pods_waiting`: warm pods whose agents ask this replica for a pass now. */
  warmPodsWaiting?: () => number;
}

const PREFIX = 'hyperspool_';

export function createMetrics(options: MetricsOptions): OperatorMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: PREFIX });

  const runs = new Gauge({
    name: `${PREFIX}runs`,
    help: 'Run resources by namespace and phase; reported by the leader only.',
    labelNames: ['namespace', 'phase'],
    registers,
  });
  const runsFailed = new Counter({ name: `${PREFIX}runs_failed_total`, help: 'Runs that ended failed, by namespace.', labelNames: ['namespace'], registers });
  const passesStarted = new Counter({
    name: `${PREFIX}passes_started_total`,
    help: 'Passes started (one Job each), by namespace.',
    labelNames: ['namespace'],
    registers,
  });
  const passStartLatency = new Histogram({
    name: `${PREFIX}pass_start_latency_seconds`,
    help: "Seconds from a due run's pass being dispatched (a Job created) to its script starting (the pod's agent asking for it).",
    // A pass on a cluster waits for a Job, a pod, an image and a sidecar: sub-second to minutes.
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers,
  });
  const journalWrite = new Histogram({
    name: `${PREFIX}journal_write_seconds`,
    help: 'Seconds to write one journal record.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const informerObjects = new Gauge({
    name: `${PREFIX}informer_objects`,
    help: "Objects in each of the leader's informer caches, by resource; reported by the leader only.",
    labelNames: ['resource'],
    registers,
  });
  const informerSlimObjects = new Gauge({
    name: `${PREFIX}informer_slim_objects`,
    help: "Of the objects in each of the leader's informer caches, those kept only as their summary (a finished Run); reported by the leader only.",
    labelNames: ['resource'],
    registers,
  });
  const queueDepth = new Gauge({
    name: `${PREFIX}queue_depth`,
    help: "Keys waiting in the leader's work queue; 0 on other replicas.",
    registers,
  });
  const reconciles = new Counter({
    name: `${PREFIX}reconciles_total`,
    help: 'Reconciles done by the leader, by kind (Run, Handler, Schedule, Workflow) and result (success, requeue: to look again later, error: retried with backoff, terminal: bad input written to status, not retried).',
    labelNames: ['kind', 'result'],
    registers,
  });
  const informerRelists = new Counter({
    name: `${PREFIX}informer_relists_total`,
    help: "Lists the leader's informers made, by kind and reason: start, resync, expired (the watch's resourceVersion was compacted away, 410) or error (a watch that failed).",
    labelNames: ['kind', 'reason'],
    registers,
  });
  const reconcileErrors = new Counter({
    name: `${PREFIX}reconcile_errors_total`,
    help: "Reconciles that failed and were requeued with backoff, by kind, the object's namespace and reason (the API server's, such as Forbidden, or the error's class).",
    labelNames: ['kind', 'namespace', 'reason'],
    registers,
  });
  const isLeader = new Gauge({
    name: `${PREFIX}is_leader`,
    help: '1 when this replica holds the leader lease.',
    registers,
  });
  const shardsOwned = new Gauge({
    name: `${PREFIX}shards_owned`,
    help: 'How many shards of the runs this replica leads (--shards; shard 0 is the leader lease).',
    registers,
  });
  const buildInfo = new Gauge({
    name: `${PREFIX}build_info`,
    help: 'Always 1; the version is in the label.',
    labelNames: ['version'],
    registers,
  });
  const startedAt = options.oldestRunningPassStartedAt;
  const oldestRunningPass = new Gauge({
    name: `${PREFIX}oldest_running_pass_seconds`,
    help: 'Seconds the oldest pass under way has been running; 0 when none runs, and on replicas that do not lead.',
    registers,
    ...(startedAt && {
      collect(this: Gauge) {
        const started = startedAt();
        this.set(started ? Math.max(0, (Date.now() - started.getTime()) / 1000) : 0);
      },
    }),
  });

  const passesLost = new Counter({
    name: `${PREFIX}passes_lost_total`,
    help: "Passes lost, by namespace: the pod ended without its agent's report (deleted, evicted, OOM-killed, its node lost); the run replays in a new pass.",
    labelNames: ['namespace'],
    registers,
  });
  const passPodsNotStarting = new Gauge({
    name: `${PREFIX}pass_pods_not_starting`,
    help: "Pass pods that cannot start their script, by namespace and reason (ImagePullBackOff, CreateContainerConfigError, Unschedulable...); reported by the leader only.",
    labelNames: ['namespace', 'reason'],
    registers,
  });
  const artifactDeletionsFailed = new Counter({
    name: `${PREFIX}artifact_deletions_failed_total`,
    help: 'Runs whose artifacts could not be deleted when due (their Run deleted, or past the Workflow ttl), by namespace: the storage did not answer; every sweep tries again.',
    labelNames: ['namespace'],
    registers,
  });
  const { databaseUp, openWaitsSince, warmPodsWaiting } = options;
  new Gauge({
    name: `${PREFIX}warm_pods_waiting`,
    help: "Warm pass pods (Workflows' spec.warmPods) whose agents are waiting for a pass now, ready to take one; asked of the leader, so 0 elsewhere.",
    registers,
    ...(warmPodsWaiting && {
      collect(this: Gauge) {
        this.set(warmPodsWaiting());
      },
    }),
  });
  new Gauge({
    name: `${PREFIX}database_up`,
    help: "1 when PostgreSQL answered this replica's query at scrape time (within 2 s), else 0.",
    registers,
    ...(databaseUp && {
      async collect(this: Gauge) {
        this.set((await databaseUp().catch(() => false)) ? 1 : 0);
      },
    }),
  });
  new Gauge({
    name: `${PREFIX}oldest_open_wait_seconds`,
    help: 'Seconds the oldest open-ended wait of each namespace has lasted: a run waiting with no timeout (a signal, an event, an approval, a lease, a child), or past the time it should have woken; no series for a namespace with none.',
    labelNames: ['namespace'],
    registers,
    ...(openWaitsSince && {
      async collect(this: Gauge<'namespace'>) {
        // The database unreachable is hyperspool_database_up's to say; this gauge keeps its last values.
        const waits = await openWaitsSince().catch(() => null);
        if (!waits) return;
        this.reset();
        for (const { namespace, since } of waits) this.set({ namespace }, Math.max(0, (Date.now() - since.getTime()) / 1000));
      },
    }),
  });

  buildInfo.set({ version: options.version }, 1);
  isLeader.set(0);
  shardsOwned.set(0);
  queueDepth.set(0);
  oldestRunningPass.set(0);

  return {
    registry,
    runs,
    runsFailed,
    passesStarted,
    passStartLatency,
    journalWrite,
    queueDepth,
    informerObjects,
    informerSlimObjects,
    reconciles,
    informerRelists,
    reconcileErrors,
    isLeader,
    shardsOwned,
    buildInfo,
    oldestRunningPass,
    passesLost,
    passPodsNotStarting,
    artifactDeletionsFailed,
    forgetLeaderOnly() {
      runs.reset();
      passPodsNotStarting.reset();
      informerObjects.reset();
      informerSlimObjects.reset();
      queueDepth.set(0);
      oldestRunningPass.set(0);
    },
    metricsText: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
