import type { BatchV1Api, V1Job, V1Pod } from '@kubernetes/client-node';
import { ensureError } from '../../common/errors.js';
import { ABANDONED } from '../../passes/executor.js';
import type { AttemptEnd } from '../../activities/activity-attempts.js';
import type { Store } from '../../store/store.js';
import type { ActivityRecord, RunRecord } from '../../store/types.js';
import type { ActivityClass } from '../api/generated.js';
import { createJobIfAbsent, deleteJob } from '../kube/jobs.js';
import { isTransient, retryTransient } from '../kube/retry.js';
import { LABELS, activityJobName, activityKey, runKey } from '../naming.js';
import type { JobOwner, PassJobSettings } from '../passes/job-builder.js';
import { classFor } from './activity-classes.js';
import { buildAttemptJob } from './activity-job.js';
import { podTrouble } from '../passes/pod-trouble.js';
import { projectOfRunId } from '../../common/ids.js';

/** An attempt whose pod can never start its command (PodTrouble.fatal). */
interface Unstartable {
  kind: 'unstartable';
  message: string;
}

export interface KubeActivitiesOptions {
  store: Store;
  batch: BatchV1Api;
  settings: PassJobSettings;
  maxResultBytes: number;
  classes(): readonly ActivityClass[];
  /** The Run resource that owns the run's Jobs (created if the run began in the store). */
  ownerOf(run: RunRecord): Promise<JobOwner>;
  onAttemptStarted?(activity: ActivityRecord, job: string): void;
}

/**
 * Activity attempts as Jobs. An attempt is under way from its Job's creation until its pod reports
 * the command's result (the API records it: `reported`) or its Job ends or goes without a report
 * (the pod was lost: the executor queues a new attempt). The run waiting for it holds no pod.
 */
export class KubeActivities {
  /** Attempts under way here, by Job name: how each ends. */
  private readonly underWay = new Map<string, (end: AttemptEnd | Unstartable) => void>();
  /** Since when each attempt's pod has shown its trouble (by Job name): some reasons get a grace period. */
  private readonly troubledSince = new Map<string, { reason: string; since: number }>();

  constructor(private readonly options: KubeActivitiesOptions) {}

  runActivity = async (activity: ActivityRecord, signal: AbortSignal): Promise<AttemptEnd> => {
    const { store, batch } = this.options;
    const name = activityJobName(activity.runId, activity.name, activity.attempt);
    // The executor starts no attempt of a run that has ended.
    const run = await store.getRun(activity.runId);
    if (!run) return { kind: 'result', result: { stdout: '', exitCode: 1, attempts: activity.attempt } };
    const klass = classFor(this.options.classes(), activity.requires);
    if (!klass) {
      // The class it was submitted for went since: the attempt fails, saying why, as a command would.
      await store.appendLog(
        run.id,
        run.passes,
        `spool: activity ${activity.name}, attempt ${activity.attempt}: no ActivityClass offers ${activity.requires.join(', ') || 'activities'} any more\n`,
      );
      return { kind: 'result', result: { stdout: '', exitCode: 1, attempts: activity.attempt } };
    }
    const ended = new Promise<AttemptEnd | Unstartable>((resolve) => this.underWay.set(name, resolve));
    const aborted = new Promise<AttemptEnd | Unstartable>((resolve) => {
      const stop = (): void => resolve({ kind: 'abandoned' });
      if (signal.aborted) stop();
      signal.addEventListener('abort', stop, { once: true });
    });
    try {
      try {
        // An API server restarting (or a connection reset) is waited out, as for a pass.
        await retryTransient(async () => {
          const owner = await this.options.ownerOf(run);
          await this.endEarlierAttempts(activity);
          await createJobIfAbsent(batch, buildAttemptJob(activity, klass, owner, this.options.settings, this.options.maxResultBytes));
        }, signal);
      } catch (error) {
        if (signal.aborted) return { kind: 'abandoned' };
        if (isTransient(error)) return { kind: 'lost', message: `its Job could not be created: ${ensureError(error).message}` };
        throw error;
      }
      this.options.onAttemptStarted?.(activity, name);
      const end = await Promise.race([ended, aborted]);
      // Cancelled rather than handed over: the attempt's pod goes too.
      if (end.kind === 'abandoned' && signal.reason !== ABANDONED) await deleteJob(batch, namespaceOf(activity), name);
      if (end.kind !== 'unstartable') return end;
      await deleteJob(batch, namespaceOf(activity), name);
      await store.appendLog(
        run.id,
        run.passes,
        `spool: activity ${activity.name}, attempt ${activity.attempt}: ${end.message}\n`,
      );
      return { kind: 'result', result: { stdout: '', exitCode: 1, attempts: activity.attempt } };
    } finally {
      this.underWay.delete(name);
      this.troubledSince.delete(name);
    }
  };

  /**
   * Feed from the pod informer: an attempt's pod that can never start its command (an invalid
   * image name, a missing Secret after a grace period) ends the attempt as a failure of the
   * command, its reason in the run's log, rather than waiting for good. Troubles that may heal
   * (an image pull backing off, no node yet) wait, as the pod does.
   */
  podChanged(pod: V1Pod): void {
    const job = pod.metadata?.ownerReferences?.find((owner) => owner.kind === 'Job' && owner.controller)?.name ?? '';
    const resolve = this.underWay.get(job);
    if (!resolve) return;
    const seen = this.troubledSince.get(job);
    const trouble = podTrouble(pod, (reason) => (seen?.reason === reason ? Date.now() - seen.since : 0));
    if (!trouble) return void this.troubledSince.delete(job);
    if (seen?.reason !== trouble.reason) this.troubledSince.set(job, { reason: trouble.reason, since: Date.now() });
    if (trouble.fatal) resolve({ kind: 'unstartable', message: trouble.message });
  }

  /** The API recorded an attempt's result, which its pod reported. */
  reported(runId: string, name: string, attempt: number): void {
    this.underWay.get(activityJobName(runId, name, attempt))?.({ kind: 'recorded' });
  }

  /** Feed from the Job informer: an attempt's Job that ended, or went away, before its pod's report. */
  jobChanged(job: V1Job, deleted = false): void {
    const resolve = this.underWay.get(job.metadata?.name ?? '');
    if (!resolve) return;
    if (deleted) return resolve({ kind: 'lost', message: 'its Job was deleted' });
    const condition = job.status?.conditions?.find(
      (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
    );
    // A pod that reported has its report recorded before its process ends: this is a pod lost.
    if (condition)
      resolve({
        kind: 'lost',
        message: `its Job ended ${condition.type}${condition.reason ? ` (${condition.reason})` : ''} without a report`,
      });
  }

  /**
   * A new attempt supersedes older ones: a pod still running one that was never settled (queued
   * again by a new leader) is ended. One whose result was recorded (the store's last result names
   * it) is left to end by itself, its log kept: its pod may still be exiting after its report.
   */
  private async endEarlierAttempts(activity: ActivityRecord): Promise<void> {
    const { batch } = this.options;
    const selector = `${LABELS.run}=${runKey(activity.runId)},${LABELS.activity}=${activityKey(activity.name)}`;
    const jobs = await batch.listNamespacedJob({ namespace: namespaceOf(activity), labelSelector: selector });
    for (const job of jobs.items) {
      const attempt = Number(job.metadata?.labels?.[LABELS.attempt]);
      const done = job.status?.conditions?.some(
        (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
      );
      const settled = attempt <= (activity.result?.attempts ?? 0);
      if (attempt < activity.attempt && !settled && !done && job.metadata?.name)
        await deleteJob(batch, namespaceOf(activity), job.metadata.name);
    }
  }
}

function namespaceOf(activity: ActivityRecord): string {
  return projectOfRunId(activity.runId);
}
