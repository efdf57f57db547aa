import type { BatchV1Api, V1Job, V1Pod } from '@kubernetes/client-node';
import type { PassHost } from '../../engine/pass.js';
import { scriptOutcome, type RunOutcome } from '../../engine/settle.js';
import { ensureError } from '../../common/errors.js';
import { ABANDONED } from '../../passes/executor.js';
import type { RemotePasses } from '../../server/remote-passes.js';
import type { Store } from '../../store/store.js';
import type { RunRecord } from '../../store/types.js';
import type { WarmPass } from '../warm/assignments.js';
import { deleteJob, deleteJobs } from '../kube/jobs.js';
import { isTransient, retryTransient } from '../kube/retry.js';
import { LABELS, runKey } from '../naming.js';
import { buildPassJob, type JobOwner, type PassJobSettings } from './job-builder.js';
import { createPassJob } from './create-pass-job.js';
import { podTrouble, type PodTrouble } from './pod-trouble.js';

/** A promise and what settles it (Promise.withResolvers, which Node 20 lacks). */
function settleable<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** The label selector of this pass's Job (whatever its name: the name waits for the Run's). */
const thisPass = (run: RunRecord): string => `${LABELS.run}=${runKey(run.id)},${LABELS.pass}=${run.passes}`;

/** A run whose passes keep being lost (its pods die before they end) fails after this many in a row. */
const MAX_LOST_IN_A_ROW = 5;

const DEFAULT_START_TIMEOUT_SECONDS = 600;

/** Settles if `started` has not settled within `ms` (never, if it does first or `over` aborts). */
function startDeadline(started: Promise<void>, ms: number, over: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const clear = (): void => clearTimeout(timer);
    void started.then(clear);
    over.addEventListener('abort', clear, { once: true });
  });
}

export interface KubePassesOptions {
  store: Store;
  passes: RemotePasses;
  batch: BatchV1Api;
  settings: PassJobSettings;
  /** The Run resource that owns the run's Jobs (created if the run began in the store). */
  ownerOf(run: RunRecord): Promise<JobOwner>;
  /**
   * Assigns the pass to a warm pod of the run's pool whose agent waits (spec.warmPods): that pod's
   * Job, now the pass's; null when none waits, and the pass gets a Job of its own.
   */
  takeWarmPod?(run: RunRecord): Promise<WarmPass | null>;
  /** A pass's Job was created: the run, and the Job's name. */
  onPassStarted?(run: RunRecord, job: string): void;
  /** A pass's pod ended without its agent's report, with why: the run replays (or fails, after too many in a row). */
  onPassLost?(run: RunRecord, message: string): void;
  /** Seconds from dispatching a pass to its pod's agent asking for the script. */
  onScriptStarting?(seconds: number): void;
  /** A pass's pod is stuck (an image it cannot pull, a missing Secret, no node), or no longer (null). */
  onPodTrouble?(run: RunRecord, trouble: PodTrouble | null): void;
}

/** A pass under way, as its pod's changes are matched to it. */
interface PassUnderWay {
  run: RunRecord;
  /** The trouble last reported, and since when its reason has been seen. */
  trouble: (PodTrouble & { since: number }) | null;
  /** Re-reads the last pod once a grace period is over (the kubelet may not report again). */
  recheck: NodeJS.Timeout | null;
  /** Ends the pass as failed: its pod can never start. */
  fail(message: string): void;
}

/**
 * Passes as Jobs. A pass is under way from its Job's creation until the script's runner reports
 * how the script ended (or the Job ends without a report: the pod was lost, and the run replays).
 */
export class KubePasses {
  /** Passes under way here, by Job name: the run, and how its Job's end reaches the pass. */
  private readonly finished = new Map<string, { run: RunRecord; end: (reason: string) => void }>();
  private readonly underWay = new Map<string, PassUnderWay>();
  private readonly lostInARow = new Map<string, number>();

  constructor(private readonly options: KubePassesOptions) {}

  runPass = async (run: RunRecord, host: PassHost, signal: AbortSignal): Promise<RunOutcome> => {
    const { store, passes, batch, settings } = this.options;
    const remote = await passes.start(store, run, host);
    const dispatchedAt = performance.now();
    void remote.starting.then(() => this.options.onScriptStarting?.((performance.now() - dispatchedAt) / 1000));
    // The Job is named after the Run, known once ownerOf has it: until then nothing can match it.
    let name: string | null = null;
    const jobEnded = settleable<string>();
    const podFailed = settleable<string>();
    const passOver = new AbortController();
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal.aborted) resolve('aborted');
      signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    const watch = (job: string): void => {
      name = job;
      this.finished.set(job, { run, end: jobEnded.resolve });
      this.underWay.set(job, { run, trouble: null, recheck: null, fail: podFailed.resolve });
    };
    // This pass's Jobs (or the run's, by `selector`). A warm pod's Job is relabelled as this pass's
    // after its agent was answered: deleting by label waits for that, or it would miss it.
    let labelled: Promise<void> = Promise.resolve();
    const deletePassJobs = async (selector = thisPass(run)): Promise<void> => {
      await labelled;
      await deleteJobs(batch, run.project, selector);
    };
    try {
      try {
        // A warm pod's Job, assigned this pass, is watched at once: its agent has the script.
        const warm = (await this.options.takeWarmPod?.(run)) ?? null;
        if (warm) {
          watch(warm.job);
          labelled = warm.labelled;
        }
        // An API server restarting (or a connection reset) is waited out, not taken for the run's end.
        await retryTransient(async () => {
          const owner = await this.options.ownerOf(run);
          await this.endEarlierPasses(run);
          if (warm) return;
          const job = buildPassJob(run, owner, settings);
          watch(job.metadata?.name ?? '');
          await createPassJob(batch, job, owner);
        }, signal);
      } catch (error) {
        if (signal.aborted) return await this.aborted(run, signal, deletePassJobs);
        const message = `pass ${run.passes} could not start: ${ensureError(error).message}`;
        return isTransient(error) ? this.lost(run, message) : { kind: 'failed', message };
      }
      this.options.onPassStarted?.(run, name ?? '');
      const startTimeoutMs = (settings.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS) * 1000;
      const neverStarted = startDeadline(remote.starting, startTimeoutMs, AbortSignal.any([signal, passOver.signal]));
      const ended = await Promise.race([
        remote.exited.then((exit) => ({ exit })),
        jobEnded.promise.then((reason) => ({ reason })),
        podFailed.promise.then((failure) => ({ failure })),
        neverStarted.then(() => ({ reason: `its pod did not start the script within ${startTimeoutMs / 1000}s (scheduling? image pull?)`, stuck: true })),
        aborted,
      ]);
      if (ended === 'aborted') return await this.aborted(run, signal, deletePassJobs);
      const { pass } = remote;
      // The journal may have settled it before the script's end came (a suspension, a divergence).
      if (pass.failure || pass.suspension || 'exit' in ended) {
        const outcome = scriptOutcome(pass, 'exit' in ended ? ended.exit : { code: null, signal: null });
        // A waiting run holds nothing, not even a finished pod (its own, or a lost pass's before
        // it): its output is in the run's log.
        if (outcome.kind === 'suspended') await this.clearAway(run, deletePassJobs);
        return this.ended(run, outcome);
      }
      if ('failure' in ended) {
        await deletePassJobs();
        return this.ended(run, { kind: 'failed', message: `pass ${run.passes}'s pod cannot start: ${ended.failure}` });
      }
      // A pod that never started is ended, so it cannot start late beside the next pass's.
      if ('stuck' in ended) await deletePassJobs();
      return this.lost(run, `pass ${run.passes} lost: ${ended.reason}`);
    } finally {
      passOver.abort();
      if (name !== null) {
        this.finished.delete(name);
        this.passOver(name);
      }
      passes.end(run.id, run.passes);
    }
  };

  /**
   * Every pass Job of a run that suspended, this pass's and any lost one's before it, in one
   * request (not the activity attempts', which go on while it waits). One the API server did not
   * delete goes at its TTL.
   */
  private async clearAway(run: RunRecord, deleteJobsOf: (selector: string) => Promise<void>): Promise<void> {
    try {
      await deleteJobsOf(`${LABELS.run}=${runKey(run.id)},${LABELS.pass}`);
    } catch {
      // The pass's outcome stands whatever became of its pod.
    }
  }

  private async aborted(run: RunRecord, signal: AbortSignal, deletePassJobs: () => Promise<void>): Promise<RunOutcome> {
    // The operator stopped leading: the pod is the next leader's business (it replays the run).
    if (signal.reason === ABANDONED) return { kind: 'lost', message: 'the operator stopped leading' };
    await deletePassJobs();
    return { kind: 'failed', message: 'cancelled' };
  }

  /** Feed from the Job informer: a pass's Job that ended or went away. */
  jobChanged(job: V1Job, deleted = false): void {
    const name = job.metadata?.name ?? '';
    const pass = this.finished.get(name);
    // A Job of that name may be an earlier Run's (a Run deleted and made again), going away now; a
    // warm pod's Job has a generated name of its own, which it may not be relabelled with yet.
    const labels = job.metadata?.labels ?? {};
    if (!pass || (labels[LABELS.run] !== runKey(pass.run.id) && labels[LABELS.warm] === undefined)) return;
    const resolve = pass.end;
    if (deleted) return resolve('its Job was deleted');
    const condition = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    if (condition) resolve(`its Job ended ${condition.type}${condition.reason ? ` (${condition.reason})` : ''} without word from the script`);
  }

  /**
   * Feed from the pod informer: a pass's pod that cannot start its script says why on the Run
   * within seconds (not after --pass-start-timeout), and fails the pass at once when waiting cannot
   * mend it (an invalid image name; a missing Secret after a grace period).
   */
  podChanged(pod: V1Pod): void {
    const job = pod.metadata?.ownerReferences?.find((owner) => owner.kind === 'Job' && owner.controller)?.name;
    const pass = job ? this.underWay.get(job) : undefined;
    if (!pass || pod.metadata?.labels?.[LABELS.run] !== runKey(pass.run.id)) return;
    const now = Date.now();
    const trouble = podTrouble(pod, (reason) => (pass.trouble?.reason === reason ? now - pass.trouble.since : 0));
    const since = trouble && pass.trouble?.reason === trouble.reason ? pass.trouble.since : now;
    const changed = trouble?.reason !== pass.trouble?.reason;
    pass.trouble = trouble ? { ...trouble, since } : null;
    if (changed) this.options.onPodTrouble?.(pass.run, trouble);
    if (pass.recheck) clearTimeout(pass.recheck);
    pass.recheck = null;
    if (trouble?.fatal) pass.fail(trouble.summary);
    else if (trouble) pass.recheck = setTimeout(() => this.podChanged(pod), 5_000);
  }

  private passOver(name: string): void {
    const pass = this.underWay.get(name);
    if (!pass) return;
    if (pass.recheck) clearTimeout(pass.recheck);
    if (pass.trouble) this.options.onPodTrouble?.(pass.run, null);
    this.underWay.delete(name);
  }

  /** A new pass supersedes older ones: a pod still running an earlier pass (its operator went away) is ended. */
  private async endEarlierPasses(run: RunRecord): Promise<void> {
    const { batch } = this.options;
    const jobs = await batch.listNamespacedJob({ namespace: run.project, labelSelector: `${LABELS.run}=${runKey(run.id)}` });
    for (const job of jobs.items) {
      const pass = Number(job.metadata?.labels?.[LABELS.pass]);
      const done = job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
      if (pass < run.passes && !done && job.metadata?.name) await deleteJob(batch, run.project, job.metadata.name);
    }
  }

  private ended(run: RunRecord, outcome: RunOutcome): RunOutcome {
    this.lostInARow.delete(run.id);
    return outcome;
  }

  private lost(run: RunRecord, message: string): RunOutcome {
    this.options.onPassLost?.(run, message);
    const count = (this.lostInARow.get(run.id) ?? 0) + 1;
    this.lostInARow.set(run.id, count);
    if (count < MAX_LOST_IN_A_ROW) return { kind: 'lost', message };
    this.lostInARow.delete(run.id);
    return { kind: 'failed', message: `${message}; ${count} passes in a row were lost, so the run has failed` };
  }
}
