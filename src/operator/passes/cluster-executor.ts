import { BatchV1Api, CoreV1Api, type KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../common/json-log.js';
import { maxValueBytes } from '../../engine/limits.js';
import type { PassHost } from '../../engine/pass.js';
import { Executor, type ExecutorOptions } from '../../passes/executor.js';
import { captureLog } from '../../passes/log-capture.js';
import type { RemotePasses } from '../../server/remote-passes.js';
import type { Store } from '../../store/store.js';
import type { ActivityRecord, RunRecord } from '../../store/types.js';
import type { ActivityClass } from '../api/generated.js';
import type { WarmPass } from '../warm/assignments.js';
import { KubeActivities } from '../activities/kube-activities.js';
import type { OperatorMetrics } from '../kube/metrics.js';
import { CLUSTER_ENV } from '../naming.js';
import type { JobOwner, PassJobSettings } from './job-builder.js';
import { KubePasses } from './kube-passes.js';
import { passQuotaReader, PASS_QUOTA_ANNOTATION } from './pass-quota.js';
import type { PodTrouble } from './pod-trouble.js';

export interface ClusterExecutorOptions {
  kubeConfig: KubeConfig;
  store: Store;
  passes: RemotePasses;
  jobs: PassJobSettings;
  metrics: OperatorMetrics;
  log: Logger;
  now: () => Date;
  /** How many passes run at once, in all namespaces (--max-running-passes; 16 unless set). */
  maxRunningPasses?: number;
  /** The shards whose runs this replica dispatches (every run's unless set). */
  shards?: ExecutorOptions['shards'];
  /** The ActivityClasses, and what the executor asks of them (ActivityClassController). */
  activityClasses: {
    list: () => readonly ActivityClass[];
    executorOptions: { capabilities(): readonly string[]; capabilitiesOfferedBy: string; activityRefusal(requires: readonly string[]): string | null };
  };
  /** The Run resource that owns a run's Jobs (made if the run began in the store). */
  ownerOf: (run: RunRecord) => Promise<JobOwner>;
  /** A warm pod of the run's pool assigned this pass: its Job; null for a Job of the pass's own. */
  takeWarmPod: (run: RunRecord) => Promise<WarmPass | null>;
  /** A Workflow of the run's namespace by name, its source read now: `spool call-graph NAME` in a pass pod. */
  storedWorkflow: NonNullable<PassHost['storedWorkflow']>;
  /** The name of a run's Run resource, for log lines. */
  runName: (runId: string) => string | undefined;
  onPassStarted: (run: RunRecord) => void;
  onPassLost: (run: RunRecord, message: string) => void;
  onPodTrouble: (run: RunRecord, trouble: PodTrouble | null) => void;
  onPassEnd: (run: RunRecord) => void;
}

/** The leader's executor, starting each pass as a Job and each activity attempt as a Job of its own. */
export interface ClusterExecutor {
  executor: Executor;
  /** A pass or attempt pod changed (why it cannot start), or its Job (how it ended). */
  podChanged: (pod: V1Pod) => void;
  jobChanged: (job: V1Job, deleted?: boolean) => void;
  /** The API recorded an activity attempt's result, which its pod reported. */
  activityReported: (runId: string, name: string, attempt: number) => void;
}

export function clusterExecutor(options: ClusterExecutorOptions): ClusterExecutor {
  const { kubeConfig, store, metrics, log, now } = options;
  const batch = kubeConfig.makeApiClient(BatchV1Api);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const kubePasses = new KubePasses({
    store,
    passes: options.passes,
    batch,
    settings: options.jobs,
    ownerOf: options.ownerOf,
    takeWarmPod: options.takeWarmPod,
    onScriptStarting: (seconds) => metrics.passStartLatency.observe(seconds),
    onPassStarted: (run, job) => {
      metrics.passesStarted.inc({ namespace: run.project });
      log.info('pass dispatched', { kind: 'Run', namespace: run.project, name: options.runName(run.id), runId: run.id, pass: run.passes, job });
      options.onPassStarted(run);
    },
    onPassLost: (run, message) => {
      metrics.passesLost.inc({ namespace: run.project });
      options.onPassLost(run, message);
    },
    onPodTrouble: options.onPodTrouble,
  });
  // Each activity attempt is a Job of its own, shaped by the ActivityClass offering what it requires.
  const kubeActivities = new KubeActivities({
    store,
    batch,
    settings: options.jobs,
    maxResultBytes: maxValueBytes(),
    classes: () => options.activityClasses.list(),
    ownerOf: options.ownerOf,
    onAttemptStarted: (activity: ActivityRecord, job) => log.info('activity attempt dispatched', { runId: activity.runId, activity: activity.name, attempt: activity.attempt, job }),
  });
  const executor = new Executor(store, {
    // Only pipeline coordinators run here (scripts run in pods, which send their own output):
    // what a coordinator prints goes to its run's log, as on spool dev.
    output: (run) => captureLog(store, join(tmpdir(), 'hyperspool-logs'), run),
    runPass: kubePasses.runPass,
    runActivity: kubeActivities.runActivity,
    ...options.activityClasses.executorOptions,
    noWorkflowFiles: 'on a cluster a fan_out body is a Workflow, by name; none was pinned with this run',
    storedWorkflow: options.storedWorkflow,
    schedules: true,
    maxConcurrentPasses: options.maxRunningPasses ?? 16,
    ...(options.shards ? { shards: options.shards } : {}),
    passQuota: passQuotaReader(core, (namespace, value) =>
      log.error('ignoring a pass quota that is not a whole number of at least 1', new Error(`${PASS_QUOTA_ANNOTATION}: '${value}'`), { kind: 'Namespace', name: namespace }),
    ),
    env: CLUSTER_ENV,
    now,
    onError: (message, error, runId) => log.error(message, error, { runId }),
    onPassEnd: options.onPassEnd,
  });
  return {
    executor,
    podChanged: (pod) => {
      kubePasses.podChanged(pod);
      kubeActivities.podChanged(pod);
    },
    jobChanged: (job, deleted) => {
      kubePasses.jobChanged(job, deleted);
      kubeActivities.jobChanged(job, deleted);
    },
    activityReported: (runId, name, attempt) => kubeActivities.reported(runId, name, attempt),
  };
}
