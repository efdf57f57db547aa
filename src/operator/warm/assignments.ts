import type { BatchV1Api, CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { AgentIdentity } from '../../server/remote-passes.js';
import type { RunRecord } from '../../store/types.js';
import { definitionKey, LABELS, runIdOf, runKey, WARM, workflowOf } from '../naming.js';
import { podSettingsOf } from '../workflow-source.js';
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';

/** A warm pod whose agent is asking for its pass now (a long poll), and how to answer it. */
interface Waiting {
  pod: V1Pod;
  answer(assignment: AgentIdentity | null): void;
}

/** A pass a warm pod took: its Job's name, and when that Job's labels name the pass (never fails). */
export interface WarmPass {
  job: string;
  labelled: Promise<void>;
}

/** A label's name in a JSON Patch path (RFC 6901: '/' is '~1'). */
const labelPath = (label: string): string => `/metadata/labels/${label.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** How long a retired or taken Job is remembered: the caches show it long before. */
const RETIRED_KEPT_MS = 10 * 60_000;

/** Notes `key` as of now in a map of recent moments, forgetting those kept long enough. */
function remember(moments: Map<string, number>, key: string): void {
  const now = Date.now();
  for (const [old, at] of moments) if (now - at > RETIRED_KEPT_MS) moments.delete(old);
  moments.set(key, now);
}

/** The pod's Job (its controller). */
export function jobOf(pod: V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find((owner) => owner.kind === 'Job' && owner.controller)?.name;
}

/** The run and pass a warm pod was assigned, from its labels; null while it is idle. */
export function assignmentOf(pod: V1Pod): AgentIdentity | null {
  const labels = pod.metadata?.labels ?? {};
  const key = labels[LABELS.run];
  const pass = Number(labels[LABELS.pass]);
  if (labels[LABELS.warm] !== WARM.assigned || !key || !Number.isInteger(pass)) return null;
  return { runId: runIdOf(pod.metadata?.namespace ?? '', key), pass };
}

/**
 * The one-shot assignment of warm pods to passes, on the leader. A warm pod's agent asks for its
 * pass and waits (`wait`); a pass that is due takes one of those pods of its pool (`take`), which
 * writes the run and pass onto the pod in one JSON Patch that first tests the pod is still idle:
 * the API server applies it at most once, so two leaders (or two passes) can never both have one
 * pod, and the labels, not this process, are the record: agent-auth.ts reads them on every call,
 * and the pod's agent serves that pass and no other.
 */
export class WarmAssignments {
  /** The pods whose agents are asking now, by pod uid: only these are known to be ready. */
  private readonly waiting = new Map<string, Waiting>();
  /**
   * Idle Jobs deleted (drained, expired, over the room), `namespace/name`, and when: their pods
   * take a moment to go, and must not be given a pass meanwhile.
   */
  private readonly retired = new Map<string, number>();
  /**
   * Jobs whose pods were assigned a pass here, `namespace/name`, and when: the informers show the
   * pod's new labels (and later the Job's) a moment after, and the pool refills at once, not then.
   */
  private readonly taken = new Map<string, number>();

  constructor(
    private readonly core: CoreV1Api,
    private readonly batch: BatchV1Api,
  ) {}

  /**
   * A warm pod's agent asks (the pod as just read, its token bound to it): its pass once assigned,
   * or null after `ms` or when `signal` aborts (it asks again). A pod assigned already is answered
   * at once: its agent asks again after an answer lost on the way.
   */
  wait(pod: V1Pod, ms: number, signal: AbortSignal): Promise<AgentIdentity | null> {
    const assigned = assignmentOf(pod);
    if (assigned) return Promise.resolve(assigned);
    const uid = pod.metadata?.uid ?? '';
    // A pod asks once at a time: an earlier ask still here is its connection, gone.
    this.waiting.get(uid)?.answer(null);
    return new Promise((resolve) => {
      const done = (assignment: AgentIdentity | null): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', gone);
        if (this.waiting.get(uid) === waiting) this.waiting.delete(uid);
        resolve(assignment);
      };
      const gone = (): void => done(null);
      const timer = setTimeout(gone, ms);
      const waiting: Waiting = { pod, answer: done };
      signal.addEventListener('abort', gone, { once: true });
      this.waiting.set(uid, waiting);
    });
  }

  /**
   * An idle warm Job is being deleted: its pod is assigned nothing from now on, and its agent,
   * asking again, is refused (it exits; its pod is going anyway).
   */
  retire(namespace: string, job: string): void {
    remember(this.retired, `${namespace}/${job}`);
    for (const [uid, waiting] of this.waiting) {
      if (waiting.pod.metadata?.namespace === namespace && jobOf(waiting.pod) === job) {
        this.waiting.delete(uid);
        waiting.answer(null);
      }
    }
  }

  /** Whether this Job's pod was assigned a pass here (whatever the caches show yet). */
  isTaken(namespace: string, job: string): boolean {
    return this.taken.has(`${namespace}/${job}`);
  }

  /** Whether the pod's Job was retired: its agent is refused. */
  isRetired(pod: V1Pod): boolean {
    return this.retired.has(`${pod.metadata?.namespace ?? ''}/${jobOf(pod) ?? ''}`);
  }

  /** How many warm pods are asking now, in all pools. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Assigns this pass to a warm pod of its pool (its namespace, Workflow and pod settings as the
   * run pinned them): one whose agent is waiting here, else one of `seen` (the pods' cache), idle
   * and not going. With shards, agents ask shard 0's leader, and the leader of another shard
   * dispatches its own runs' passes: it takes a pod whose agent asks elsewhere, and the replica
   * that agent asks answers it when it sees the labels change (podChanged). The answer: that pod's
   * Job, now this pass's, and when that Job's labels say so too; null when none could be had, and
   * the pass gets a Job of its own.
   */
  async take(run: RunRecord, seen: () => readonly V1Pod[] = () => []): Promise<WarmPass | null> {
    const definition = definitionKey(podSettingsOf(run));
    const workflow = workflowOf(run).name;
    const ofPool = (pod: V1Pod): boolean => {
      const { metadata } = pod;
      return metadata?.namespace === run.project && metadata.labels?.[LABELS.workflow] === workflow && metadata.labels[LABELS.definition] === definition;
    };
    for (const [uid, waiting] of this.waiting) {
      if (!ofPool(waiting.pod)) continue;
      // Off the list before the first await: no other pass tries this pod meanwhile.
      this.waiting.delete(uid);
      const taken = await this.takePod(waiting.pod, run);
      // Gone, or assigned by another leader: its agent, asking again, learns which.
      waiting.answer(taken ? { runId: run.id, pass: run.passes } : null);
      if (taken) return taken;
    }
    const idle = (pod: V1Pod): boolean => pod.metadata?.labels?.[LABELS.warm] === WARM.idle && !pod.metadata.deletionTimestamp && !this.isRetired(pod);
    for (const pod of seen().filter((each) => ofPool(each) && idle(each))) {
      const taken = await this.takePod(pod, run);
      if (taken) return taken;
    }
    return null;
  }

  /** A pod changed (the pods' cache): one whose agent waits here and that another replica assigned a pass is told it now. */
  podChanged(pod: V1Pod): void {
    const assigned = assignmentOf(pod);
    if (assigned) this.waiting.get(pod.metadata?.uid ?? '')?.answer(assigned);
  }

  /** The pod made this pass's: its Job, or null if it was gone or another pass had it first. */
  private async takePod(pod: V1Pod, run: RunRecord): Promise<WarmPass | null> {
    const job = jobOf(pod);
    if (!job || !(await this.assign(pod, run))) return null;
    const namespace = pod.metadata?.namespace ?? '';
    // The pod's labels are the record: its agent is answered now. The Job's labels then say the
    // same, off the pass's path, so that what finds a pass's Jobs by label (a suspension's cleanup,
    // a cancel, the next pass) finds this one; the pass's own cleanup waits for it. If it fails,
    // the pass still runs, and its Job goes with the Run's cleanup by name.
    remember(this.taken, `${namespace}/${job}`);
    const labelled = this.labelJob(run, namespace, job).catch(() => undefined);
    return { job, labelled };
  }

  /** The one-shot write: the pod's labels test idle and become this run's pass, or nothing changes. */
  private async assign(pod: V1Pod, run: RunRecord): Promise<boolean> {
    const patch = [
      // The very pod whose token was reviewed when its agent asked (not one made again by its name).
      { op: 'test', path: '/metadata/uid', value: pod.metadata?.uid ?? '' },
      { op: 'test', path: labelPath(LABELS.warm), value: WARM.idle },
      { op: 'replace', path: labelPath(LABELS.warm), value: WARM.assigned },
      { op: 'add', path: labelPath(LABELS.run), value: runKey(run.id) },
      { op: 'add', path: labelPath(LABELS.pass), value: String(run.passes) },
    ];
    try {
      await this.core.patchNamespacedPod({ namespace: run.project, name: pod.metadata?.name ?? '', body: patch }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
      return true;
    } catch {
      // 422: the test failed (assigned already); 404: the pod is gone. Either way, not this pass's.
      return false;
    }
  }

  private async labelJob(run: RunRecord, namespace: string, job: string): Promise<void> {
    const labels = { [LABELS.warm]: WARM.assigned, [LABELS.run]: runKey(run.id), [LABELS.pass]: String(run.passes) };
    await this.batch.patchNamespacedJob({ namespace, name: job, body: { metadata: { labels } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }
}
