import type { BatchV1Api, V1Job, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../common/json-log.js';
import type { Workflow } from '../api/generated.js';
import { deleteJob } from '../kube/jobs.js';
import { failureOf } from '../kube/request-options.js';
import { definitionKey, LABELS, WARM } from '../naming.js';
import { buildWarmJob, type PassJobSettings, type WarmPool } from '../passes/job-builder.js';
import { workflowPodSettings } from '../workflow-source.js';
import { jobOf } from './assignments.js';

/** The operator's bounds on every Workflow's warm pods. */
export interface WarmPodSettings {
  /** --max-warm-pods: idle warm pods in all namespaces. */
  max: number;
  /** --warm-pod-ttl: an idle pod older than this is replaced by a fresh one; null keeps it. */
  idleSeconds: number | null;
}

/** As the operator's flags default: 8 idle pods in all, each kept 15 minutes. */
export const DEFAULT_WARM_PODS: WarmPodSettings = { max: 8, idleSeconds: 15 * 60 };

export interface WarmPoolsOptions extends WarmPodSettings {
  batch: BatchV1Api;
  settings: PassJobSettings;
  log: Logger;
  /** The caches: every Workflow, the operator's unfinished Jobs, and its pods. */
  workflows: () => readonly Workflow[];
  jobs: () => readonly V1Job[];
  pods: () => readonly V1Pod[];
  /** Passes under way now: idle warm pods and passes together stay within maxRunningPasses. */
  running: () => number;
  /** An idle Job is about to be deleted: its pod must not be assigned a pass while it goes. */
  retire: (namespace: string, job: string) => void;
  /** Whether a Job's pod was just assigned a pass (its labels may not say so in the caches yet). */
  isTaken: (namespace: string, job: string) => boolean;
  maxRunningPasses: number;
  now: () => Date;
}

/** A pool's key: the Workflow, and the pod settings its pods are made with. */
const poolKey = (namespace: string, workflow: string, definition: string): string => `${namespace}/${workflow}/${definition}`;
const poolOfJob = (job: V1Job): string => poolKey(job.metadata?.namespace ?? '', job.metadata?.labels?.[LABELS.workflow] ?? '', job.metadata?.labels?.[LABELS.definition] ?? '');

/** How long a Job created here is counted before the informer shows it (a create it never sees). */
const MADE_GRACE_MS = 30_000;

/**
 * Keeps each Workflow's pool of warm pass pods (spec.warmPods) full: one idle Job per slot, made
 * with the Workflow's pod settings now; a pod that a pass took, or that died, is made again. A
 * Workflow edited (other pod settings), its warmPods lowered or it deleted drains what it no
 * longer wants; runs keep the settings they started with, and a pass whose pool has no pod gets a
 * Job of its own. Idle pods past --warm-pod-ttl are replaced. Pools are filled only in the room
 * the pass cap leaves: a burst of passes shrinks them, never the other way round.
 */
export class WarmPools {
  /** Jobs created that the informer has not told of yet, by name: counted, so they are not made twice. */
  private readonly made = new Map<string, { pool: string; at: number }>();
  private running: Promise<void> | null = null;
  private again = false;
  /** The last failure, while looks keep failing the same way (a namespace's quota full): said once. */
  private failure: string | null = null;

  constructor(private readonly options: WarmPoolsOptions) {}

  /** Looks at every pool soon (one look at a time; asked meanwhile, once more after it). */
  refill(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.reconcile()
      .then(() => {
        this.failure = null;
      })
      .catch((error: unknown) => {
        const { message } = failureOf(error);
        if (message !== this.failure) this.options.log.error('warm pods could not be kept', new Error(message));
        this.failure = message;
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.refill();
        }
      });
  }

  /** Feed from the Job informer: a Job made here is in the cache now (or was, and ended). */
  jobSeen(job: V1Job): void {
    this.made.delete(job.metadata?.name ?? '');
  }

  /** Resolves once a look under way (and any asked for meanwhile) is over. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async reconcile(): Promise<void> {
    const { batch, settings, max, maxRunningPasses, idleSeconds } = this.options;
    const now = this.options.now().getTime();
    const wanted = new Map<string, { pool: WarmPool; workflow: Workflow; count: number }>();
    for (const workflow of this.options.workflows()) {
      const count = workflow.spec.warmPods ?? 0;
      const { namespace = 'default', name = '', uid = '' } = workflow.metadata;
      if (count <= 0 || workflow.metadata.deletionTimestamp) continue;
      const definition = definitionKey(workflowPodSettings(workflow));
      wanted.set(poolKey(namespace, name, definition), { pool: { namespace, workflow: name, workflowUid: uid, definition }, workflow, count });
    }
    // A pod assigned a pass is that pass's, whatever its Job's labels say yet.
    const taken = new Set(this.options.pods().filter((pod) => pod.metadata?.labels?.[LABELS.warm] === WARM.assigned).map((pod) => jobOf(pod)));
    const jobs = this.options.jobs();
    const idle = jobs.filter((job) => job.metadata?.labels?.[LABELS.warm] === WARM.idle && !taken.has(job.metadata.name) && !this.options.isTaken(job.metadata.namespace ?? '', job.metadata.name ?? ''));
    // A Job the cache holds is counted there, not here: its watch event may have come (and jobSeen
    // with it) before its create answered and was noted, which counted it twice until the grace ran out.
    const cached = new Set(jobs.map((job) => job.metadata?.name));
    for (const [name, made] of this.made) if (cached.has(name) || now - made.at > MADE_GRACE_MS) this.made.delete(name);

    const expired = (job: V1Job): boolean => idleSeconds !== null && now - new Date(job.metadata?.creationTimestamp ?? now).getTime() > idleSeconds * 1000;
    const have = new Map<string, V1Job[]>();
    const drop: V1Job[] = [];
    for (const job of idle) {
      const pool = poolOfJob(job);
      const want = wanted.get(pool);
      const kept = have.get(pool) ?? [];
      if (!want || expired(job) || kept.length >= want.count) drop.push(job);
      else have.set(pool, [...kept, job]);
    }
    let total = [...have.values()].reduce((sum, jobs) => sum + jobs.length, 0) + this.made.size;
    const room = Math.max(0, Math.min(max, maxRunningPasses - this.options.running()));
    // Over the room (passes took it, or the caps were lowered): the newest idle pods go first.
    for (const jobs of [...have.values()].reverse()) {
      while (total > room && jobs.length > 0) {
        drop.push(jobs.pop() as V1Job);
        total -= 1;
      }
    }
    for (const job of drop) {
      const { namespace = '', name = '' } = job.metadata ?? {};
      this.options.retire(namespace, name);
      await deleteJob(batch, namespace, name);
    }

    for (const [key, { pool, workflow, count }] of wanted) {
      const pending = [...this.made.values()].filter((made) => made.pool === key).length;
      for (let missing = count - (have.get(key)?.length ?? 0) - pending; missing > 0 && total < room; missing -= 1) {
        const created = await batch.createNamespacedJob({ namespace: pool.namespace, body: buildWarmJob(pool, workflowPodSettings(workflow), settings) });
        this.made.set(created.metadata?.name ?? '', { pool: key, at: now });
        total += 1;
      }
    }
  }
}
