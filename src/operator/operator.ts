import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AuthenticationV1Api, AuthorizationV1Api, BatchV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import express from 'express';
import { RetryableError, ensureError } from '../common/errors.js';
import { jsonLogger, type Logger } from '../common/json-log.js';
import { flushTracing, setTracingService } from '../tracing/tracing.js';
import { createApp } from '../server/app.js';
import { startGateNotifier } from '../server/chat/gates.js';
import type { ChatSettings } from '../server/chat/settings.js';
import type { ServerContext } from '../server/context.js';
import type { RunResource } from '../api/responses.js';
import { errorHandler } from '../server/http-error.js';
import { aggregatedApi, statusErrors } from './aggregated/routes.js';
import { readFrontProxy, type FrontProxy } from './aggregated/front-proxy.js';
import { selfSignedCertificate } from './aggregated/self-signed.js';
import { RunReconciler } from './runs/run-reconciler.js';
import type { Run } from './api/generated.js';
import { RemotePasses } from '../server/remote-passes.js';
import type { Migrated } from '../store/migrate.js';
import type { ArtifactsFlags } from '../store/artifacts/s3/location.js';
import { ArtifactsUnreachableError, openStore } from '../store/open.js';
import { untilItAnswers } from './kube/backoff.js';
import { forwardToLeader, shardOfAgentCall } from './forward-to-leader.js';
import type { Store } from '../store/store.js';
import { agentAuthenticator, warmPodAuthenticator } from './auth/agent-auth.js';
import { activityAuthenticator } from './auth/activity-auth.js';
import { userAuthorizer } from './auth/user-auth.js';
import { Controllers } from './controllers/index.js';
import { hostPort, startHealthServer, type HealthServer } from './kube/health-server.js';
import { shardLeaseName, startShardOwnership, type ShardOwnership } from './shards/shard-ownership.js';
import { createMetrics, type OperatorMetrics } from './kube/metrics.js';
import { RUN } from './api/generated.js';
import { CLUSTER_ENV, LABELS, RUN_KEY, runIdOf } from './naming.js';
import { Resources } from './resources.js';
import { timingJournalWrites } from './timed-store.js';
import type { PassJobSettings } from './passes/job-builder.js';
import { WarmAssignments } from './warm/assignments.js';
import type { WarmPodSettings } from './warm/warm-pools.js';

/** How long a warm pod's ask for its pass is held before it is answered "not yet" (the agent asks again). */
const ASSIGNMENT_POLL_MS = 20_000;

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  databaseUrl: string;
  /** Where artifacts' bytes go (--artifacts, --s3-endpoint, --s3-region); absent: the journal's database. */
  artifacts?: ArtifactsFlags;
  /** How often the leader sweeps the artifacts of deleted Runs and expired Workflow retention (every minute unless set). */
  artifactSweepEveryMs?: number;
  /** Where the leader Lease lives (the operator's own namespace). */
  namespace: string;
  /** This replica's name (the pod's). */
  name: string;
  /** The API port (7456) and the probes-and-metrics port (9464); 0 picks free ones. */
  port: number;
  metricsPort: number;
  /** The aggregated API's HTTPS port (7443 unless set; 0 picks a free one), which kube-apiserver calls. */
  aggregatedPort?: number;
  host?: string;
  /** How the other replicas reach this one's API: agents' calls are forwarded to the leader. */
  advertiseUrl?: string;
  jobs: PassJobSettings;
  /** Approval gates in Slack and Mattermost (--chat): the leader posts them, any replica takes the clicks. */
  chat?: ChatSettings;
  /** How many passes run at once, in all namespaces (--max-running-passes; 16 unless set). */
  maxRunningPasses?: number;
  /** Workflows' warm pass pods: how many idle in all (--max-warm-pods), and how long one may wait (--warm-pod-ttl; null: no limit). */
  warmPods?: WarmPodSettings;
  leaseDurationSeconds?: number;
  /**
   * How many shards the runs are split into (--shards; 1 unless set), each led by one replica at
   * a time (src/operator/shards): with one, one leader does everything, as before shards.
   */
  shards?: number;
  sweepMs?: number;
  /** How often the sweep reads every unfinished run, not only those changed since its last read (every minute unless set). */
  fullSweepEveryMs?: number;
  resyncPeriodMs?: number;
  version?: string;
  /** Where the operator's JSON log lines go (stderr unless given; tests read them). */
  log?: Logger;
  /** Seconds after it finished when a Run resource is deleted (--run-ttl); null or absent keeps them. */
  runTtlSeconds?: number | null;
  /** Seconds after it finished when a run leaves the store (--archive-retention); null or absent keeps them. */
  archiveRetentionSeconds?: number | null;
}

export interface Operator {
  url: string;
  healthUrl: string;
  /** The addresses really listened on (`0.0.0.0:7456`), as the log's first line says. */
  listening: { api: string; probes: string; aggregated: string };
  store: Store;
  metrics: OperatorMetrics;
  /** Leads shard 0 (the only one, unless --shards): the cluster-wide work is this replica's. */
  isLeader(): boolean;
  /** The shards this replica leads now. */
  shards(): number[];
  /** Stops as a crash would: the lease is left to expire. */
  kill(): Promise<void>;
  /** Stops gracefully: gives the lease up so another replica leads at once. */
  close(): Promise<void>;
}

/**
 * `spool operator`: one replica. Every replica serves the API, probes and metrics; the one holding
 * the Lease also runs the controllers and the executor, and hosts the passes under way, so agents'
 * calls that reach another replica are forwarded to it.
 */
export async function startOperator(options: OperatorOptions): Promise<Operator> {
  const { kubeConfig } = options;
  const log = (options.log ?? jsonLogger()).with({ replica: options.name });
  setTracingService('hyperspool-operator');
  // Null until the database has answered: probes and metrics are served before that, so that a
  // replica started while PostgreSQL is away waits, not ready, instead of crash-looping.
  let opened: Store | null = null;
  let waitingFor = 'the database';
  let controllers: Controllers | null = null;
  let ownership: ShardOwnership | null = null;
  // Warm pods' agents ask shard 0's leader for their pass, whoever leads it now.
  const warm = new WarmAssignments(kubeConfig.makeApiClient(CoreV1Api), kubeConfig.makeApiClient(BatchV1Api));
  const metrics = createMetrics({
    warmPodsWaiting: () => warm.size,
    version: options.version ?? '0.1.0',
    oldestRunningPassStartedAt: () => controllers?.oldestPassStartedAt(),
    databaseUp: async () => opened !== null && (await answersWithin(2_000, opened.getRun('database-probe'))),
    openWaitsSince: async () => (opened ? await opened.openWaitsSince(new Date()) : []).map(({ project, since }) => ({ namespace: project, since })),
  });
  const host = options.host ?? '0.0.0.0';
  const health: HealthServer = await startHealthServer({
    port: options.metricsPort,
    host,
    metrics,
    ready: async () => {
      if (!opened) return { ready: false, detail: `waiting for ${waitingFor}` };
      await opened.getRun('readiness-probe');
      if (controllers && !controllers.synced()) return { ready: false, detail: 'informers not synced' };
      return { ready: true };
    },
  });
  // Every replica migrates at start; the advisory lock in migrate() lets one apply each migration,
  // and the log says which replica did (an upgrade's record of what changed in the database).
  const onMigrated = ({ applied, unknown }: Migrated): void => {
    if (applied.length > 0) log.info('database migrated', { applied: applied.join(',') });
    else log.info('database schema up to date');
    if (unknown.length > 0) log.info('the database has migrations this release does not know (a newer release applied them)', { unknown: unknown.join(',') });
  };
  const open = (): Promise<Store> => openStore({ databaseUrl: options.databaseUrl, onMigrated, ...options.artifacts });
  // A replica that starts while PostgreSQL is away (restarting with it, or before its first start)
  // waits rather than exit, which would put it in CrashLoopBackOff, minutes away once the database
  // is back. So does one whose S3 artifact store does not answer yet. Anything not retryable (a
  // wrong password, a failed migration, a wrong bucket or key) ends it at once.
  // The readiness reason follows the latest failure, and the log says each time it changes (the
  // artifact store, checked first, may answer while the database still does not).
  const reached = await untilItAnswers(open, {
    retryable: (error) => error instanceof RetryableError,
    onFailure: (error, failedBefore) => {
      const waitingNow = error instanceof ArtifactsUnreachableError ? 'the artifact store' : 'the database';
      if (failedBefore > 0 && waitingNow === waitingFor) return;
      waitingFor = waitingNow;
      // Where the database was looked for, so a newcomer whose PostgreSQL never started (a claim
      // Pending without a StorageClass, an image not pulled) knows which pod to look at.
      const hint = waitingFor === 'the database' ? `: is PostgreSQL running at ${databaseAddress(options.databaseUrl)}?` : '';
      log.error(`${waitingFor} cannot be reached; waiting for it (not ready until it answers)${hint}`, error instanceof ArtifactsUnreachableError ? error : (ensureError(error).cause ?? error));
    },
  });
  const store = timingJournalWrites(reached, (seconds) => metrics.journalWrite.observe(seconds));
  opened = store;
  const passes = new RemotePasses();
  const warmPod = warmPodAuthenticator(kubeConfig.makeApiClient(AuthenticationV1Api), kubeConfig.makeApiClient(CoreV1Api));
  const resources = new Resources(kubeConfig);

  /** The name of a run's Run resource, asked of the API server: any replica may answer a request. */
  const runName = async (runId: string): Promise<string | undefined> => {
    const [, namespace = '', key = ''] = runId.split(':');
    return (await resources.names(RUN.plural, namespace, `${LABELS.run}=${key}`).catch(() => []))[0];
  };
  /** The Run resources of runs, for the API's answers: people know a run by its Run's name. */
  const runResources = async (runIds: string[]): Promise<Map<string, RunResource>> => {
    const keysByNamespace = new Map<string, string[]>();
    for (const runId of runIds) {
      const [, namespace = '', key = ''] = runId.split(':');
      keysByNamespace.set(namespace, [...(keysByNamespace.get(namespace) ?? []), key]);
    }
    const found = new Map<string, RunResource>();
    await Promise.all(
      [...keysByNamespace].map(async ([namespace, keys]) => {
        // Unanswered (the API server away, RBAC changed): the runs are shown by their keys, as before.
        const names = await resources.namesByLabel(RUN.plural, namespace, LABELS.run, [...new Set(keys)]).catch(() => new Map<string, string>());
        for (const [key, name] of names) found.set(runIdOf(namespace, key), { name, namespace });
      }),
    );
    return found;
  };
  const agentIdentity = agentAuthenticator(kubeConfig.makeApiClient(AuthenticationV1Api), kubeConfig.makeApiClient(CoreV1Api), runName);
  const context: ServerContext = {
    store,
    runResources,
    env: CLUSTER_ENV,
    defaultProject: 'default',
    triggersAreResources: true,
    now: () => new Date(),
    poke: () => controllers?.poke(),
    abortPass: (runId) => controllers?.abortPass(runId),
    authorize: userAuthorizer(kubeConfig.makeApiClient(AuthenticationV1Api), kubeConfig.makeApiClient(AuthorizationV1Api), runName),
    agents: {
      passes,
      authenticate: agentIdentity,
      warmPods: {
        wait: async (token, signal) => {
          const reviewedAt = Date.now();
          const pod = await warmPod(token);
          if (!pod || warm.isRetired(pod)) return null;
          const assignment = await warm.wait(pod, ASSIGNMENT_POLL_MS, signal);
          if (assignment) agentIdentity.assigned(token, assignment, reviewedAt);
          return { assignment };
        },
      },
      activities: {
        authenticate: activityAuthenticator(kubeConfig.makeApiClient(AuthenticationV1Api), kubeConfig.makeApiClient(CoreV1Api)),
        reported: (identity) => controllers?.activityReported(identity),
      },
    },
    ...(options.chat ? { chat: options.chat } : {}),
  };
  const app = createApp(context);
  const outer = express();
  outer.disable('x-powered-by');
  // A pass is hosted by its run's shard's leader: an agent's call that reached another replica goes on to it.
  outer.use('/v1/agent', (req, res, next) => {
    const shard = shardOfAgentCall(req.path, ownership?.count ?? 1);
    if (ownership?.owns(shard)) return next();
    void forwardToLeader(ownership?.ownerOf(shard), req, res);
  });
  outer.use(app);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = outer.listen(options.port, host, () => resolve(listening));
    listening.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  const api = typeof address === 'object' && address ? hostPort(address.address, address.port) : `${host}:${port}`;

  const aggregated = await serveAggregatedApi(options, app, log, resources, store);
  const listening = { api, probes: health.address, aggregated: aggregated.address };
  log.info('listening', { ...listening, version: options.version ?? '0.1.0' });

  /**
   * The controllers run while this replica leads any shard, each shard's work added as it is gained
   * and taken away as it is lost; one at a time (`serially`), in the order the Leases changed hands.
   */
  const shardCount = options.shards ?? 1;
  let mine: { controllers: Controllers; started: Promise<void> } | null = null;
  const held = new Set<number>();
  let notifier: { stop(): Promise<void> } | null = null;
  let transitions: Promise<void> = Promise.resolve();
  const serially = (work: () => Promise<void>): Promise<void> => (transitions = transitions.then(work).catch((error: unknown) => log.error('changing shards failed', ensureError(error))));
  const shardLog = (shard: number) => ({ kind: 'Lease', namespace: options.namespace, name: shardLeaseName(shard), ...(shardCount > 1 ? { shard } : {}) });

  const leadShard = async (shard: number, signal: AbortSignal): Promise<void> => {
    const lost = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await serially(async () => {
      if (signal.aborted) return;
      held.add(shard);
      metrics.shardsOwned.set(held.size);
      if (shard === 0) metrics.isLeader.set(1);
      log.info(shard === 0 ? 'leadership gained' : 'shard gained', shardLog(shard));
      mine ??= startControllers();
      // Gates are posted by shard 0's leader only, so two replicas never post one twice.
      const chat = options.chat;
      if (shard === 0 && chat) notifier = startGateNotifier({ ...context, chat }, (error) => log.error('chat', error));
      const { controllers: working, started } = mine;
      await Promise.race([started, lost]);
      if (!signal.aborted) await working.shardGained(shard, signal);
    });
    await lost;
    await serially(async () => {
      if (!held.delete(shard) || !mine) return;
      metrics.shardsOwned.set(held.size);
      if (shard === 0) {
        await notifier?.stop();
        notifier = null;
      }
      const { controllers: working } = mine;
      if (held.size > 0) return working.shardLost(shard);
      mine = null;
      controllers = null;
      await working.stop();
      // What only a leader knows must not linger, stale, on a replica that leads nothing.
      metrics.forgetLeaderOnly();
    });
  };
  const startControllers = (): { controllers: Controllers; started: Promise<void> } => {
    const working = new Controllers({
      log,
      kubeConfig,
      store,
      passes,
      warm,
      ...(options.warmPods ? { warmPods: options.warmPods } : {}),
      metrics,
      jobs: options.jobs,
      ...(options.sweepMs ? { sweepMs: options.sweepMs } : {}),
      ...(options.fullSweepEveryMs ? { fullSweepEveryMs: options.fullSweepEveryMs } : {}),
      ...(options.resyncPeriodMs ? { resyncPeriodMs: options.resyncPeriodMs } : {}),
      runTtlSeconds: options.runTtlSeconds ?? null,
      ...(options.maxRunningPasses ? { maxRunningPasses: options.maxRunningPasses } : {}),
      archiveRetentionSeconds: options.archiveRetentionSeconds ?? null,
      ...(options.artifactSweepEveryMs ? { artifactSweepEveryMs: options.artifactSweepEveryMs } : {}),
      shards: { count: shardCount, owned: () => ownership?.owned() ?? [] },
    });
    controllers = working;
    return { controllers: working, started: working.start() };
  };

  let lastElectionError = '';
  ownership = startShardOwnership({
    kubeConfig,
    namespace: options.namespace,
    replica: options.name,
    identity: `${options.name}@${options.advertiseUrl ?? url}`,
    shards: shardCount,
    ...(options.leaseDurationSeconds ? { leaseDurationSeconds: options.leaseDurationSeconds } : {}),
    onShardGained: leadShard,
    onShardLost: (shard) => {
      if (shard !== 0) return log.info('shard lost', shardLog(shard));
      metrics.isLeader.set(0);
      log.info('leadership lost', shardLog(0));
    },
    onError: (error, shard) => {
      // Retries come every retry period: a failure that persists is said once.
      if (error.message !== lastElectionError) log.error('leader election failed', error, shardLog(shard ?? 0));
      lastElectionError = error.message;
    },
  });

  const shutdown = async (end: (o: ShardOwnership) => Promise<void>): Promise<void> => {
    if (ownership) await end(ownership);
    await transitions;
    server.close();
    server.closeAllConnections();
    aggregated.close();
    await health.close();
    await flushTracing((line) => log.error('flushing traces failed', new Error(line)));
    await store.close();
  };
  return {
    url,
    healthUrl: health.url,
    listening,
    store,
    metrics,
    isLeader: () => ownership?.owns(0) ?? false,
    shards: () => ownership?.owned() ?? [],
    kill: () => shutdown((e) => e.stop()),
    close: () => shutdown((e) => e.release()),
  };
}

/** Whether `query` settles successfully within `ms` (a database that hangs is as down as one that refuses). */
async function answersWithin(ms: number, query: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([query.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The aggregated API (api.hyperspool.dev) on its own HTTPS port: kube-apiserver proxies people's
 * verbs here with its front-proxy client certificate (src/operator/aggregated). The requestheader
 * CA is read from the cluster at start, and again every few minutes (the cluster may rotate it).
 */
async function serveAggregatedApi(
  options: OperatorOptions,
  app: express.Express,
  log: Logger,
  resources: Resources,
  store: Store,
): Promise<{ address: string; close(): void }> {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const { cert, key } = selfSignedCertificate([`hyperspool-operator.${options.namespace}.svc`, 'localhost']);
  let frontProxy: FrontProxy | undefined;
  const site = express();
  site.disable('x-powered-by');
  site.use(
    aggregatedApi({
      frontProxy: () => frontProxy,
      authorization: options.kubeConfig.makeApiClient(AuthorizationV1Api),
      runIdOf: async (namespace, name) => {
        const run = await resources.get<Run>(RUN.plural, namespace, name);
        if (run) return RunReconciler.runIdOf(run);
        // A run whose Run resource was deleted (its TTL, a history limit) is still in the store, by its key.
        if (!RUN_KEY.test(name)) return undefined;
        const archived = await store.getRun(runIdOf(namespace, name));
        return archived ? archived.id : undefined;
      },
    }),
  );
  site.use(statusErrors);
  site.use(app);
  site.use(errorHandler);
  // Client certificates are asked for, not required: the check is per request (front-proxy.ts).
  const server = createHttpsServer({ cert, key, requestCert: true, rejectUnauthorized: false }, site);
  let lastError = '';
  const refresh = async (): Promise<void> => {
    try {
      frontProxy = await readFrontProxy(core);
      server.setSecureContext({ cert, key, ca: frontProxy.clientCa });
      lastError = '';
    } catch (error) {
      if (ensureError(error).message !== lastError) log.error('reading the front-proxy settings failed', error, { kind: 'ConfigMap', namespace: 'kube-system', name: 'extension-apiserver-authentication' });
      lastError = ensureError(error).message;
    }
  };
  await refresh();
  const timer = setInterval(() => void refresh(), frontProxy ? 5 * 60_000 : 30_000);
  timer.unref();
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.aggregatedPort ?? 7443, host, () => resolve());
  });
  const address = server.address();
  return {
    address: typeof address === 'object' && address ? hostPort(address.address, address.port) : '',
    close: () => {
      clearInterval(timer);
      server.close();
      server.closeAllConnections();
    },
  };
}

/** Where a database URL points (host, port and database), without its user or password. */
function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'the address DATABASE_URL gives';
  }
}
