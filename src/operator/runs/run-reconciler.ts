import { TerminalError } from '../../common/errors.js';
import { submitRun } from '../../engine/admission.js';
import { apiTime } from '../api-time.js';
import { documentAdmission } from '../../workflow-file/check.js';
import { runsInProcess } from '../../common/workflow-file.js';
import type { Store } from '../../store/store.js';
import type { RunRecord, ScriptSource } from '../../store/types.js';
import { RUN, type Run, type Workflow } from '../api/generated.js';
import { CLUSTER_ENV, LABELS, RUN_KEY, runIdForResource, runIdOf, runKey } from '../naming.js';
import { rerunRun } from '../../engine/rerun.js';
import type { Resources } from '../resources.js';
import { storeWorkflowCheckout, type WorkflowCheckout } from '../workflow-checkout.js';
import type { ResolvedSource } from '../workflow-source.js';
import type { EventRecorder } from './events.js';
import { desiredRunStatus, isFinishedPhase, statusPatch } from './run-status.js';
import { failureDetail } from './failure-detail.js';
import type { PodTrouble } from '../passes/pod-trouble.js';
import type { ReconcileResult } from '../kube/work-queue.js';

export interface RunReconcilerOptions {
  store: Store;
  resources: Resources;
  events: EventRecorder;
  /** The Workflow of that name in that namespace, from the informer's cache. */
  workflow(namespace: string, name: string): Workflow | null;
  /** The Run of that name in that namespace, from the informer's cache (a rerun's source). */
  run?(namespace: string, name: string): Run | null;
  /** What a run of that Workflow starts from (its script read from its ConfigMap, if it names one). */
  source(workflow: Workflow): Promise<ResolvedSource>;
  /** The files of the Workflow's checkoutFrom, if it names one. */
  checkout?(workflow: Workflow): Promise<WorkflowCheckout>;
  now(): Date;
  /** New work in the store: the executor looks now. */
  poke(): void;
  onPhase?(run: RunRecord, previous: string | undefined): void;
  /** Why the pod of the run's pass under way cannot start its script, if it cannot. */
  podTrouble?(runId: string): PodTrouble | undefined;
  /** How soon a Run not admitted yet looks again for what it waits for (a ConfigMap no event tells of). */
  lookAgainMs: number;
}

/** Each Run object's run id (RunReconciler.runIdOf); objects are not changed once made (the cache's are read-only). */
const RUN_IDS = new WeakMap<Run, string>();

/**
 * A Run resource and its run in the store: a new Run is admitted as a run (with the Workflow's
 * script copied in), and the Run's status follows the store's record from then on.
 */
export class RunReconciler {
  constructor(private readonly options: RunReconcilerOptions) {}

  /**
   * The store's id for the run of this resource, made once per object: the sweep asks it of every
   * cached Run each second, and the cache's index keeps the same string (a new one each time was
   * 100,000 strings a second of garbage at 100,000 Runs; docs/scaling.md).
   */
  static runIdOf(resource: Run): string {
    let id = RUN_IDS.get(resource);
    if (id === undefined) {
      const namespace = resource.metadata.namespace ?? 'default';
      const key = resource.metadata.labels?.[LABELS.run];
      id = key ? runIdOf(namespace, key) : runIdForResource(namespace, resource.metadata.uid ?? '');
      RUN_IDS.set(resource, id);
    }
    return id;
  }

  /**
   * Admits a new Run, or brings its status up to the store's record. Asks to be run again when
   * it waits for its Workflow's script, and at the wake time of a run asleep.
   */
  async reconcile(resource: Run): Promise<ReconcileResult> {
    const { store, resources } = this.options;
    const namespace = resource.metadata.namespace ?? 'default';
    const name = resource.metadata.name ?? '';
    const runId = RunReconciler.runIdOf(resource);
    let run = await store.getRun(runId);
    // The run label is set once the run is in the store (after admission, or by whoever made a
    // store-born run's Run): a labelled Run the store no longer knows was admitted once, and
    // admitting it again would do a second time everything it did.
    if (!run && resource.metadata.labels?.[LABELS.run]) return this.lost(resource, runId);
    if (!run) {
      const workflowName = resource.spec.workflowRef.name;
      const workflow = this.options.workflow(namespace, workflowName);
      if (!workflow) return this.wait(resource, `Workflow ${workflowName} not found in namespace ${namespace}; the run starts once it exists`);
      // A script whose ConfigMap is not there yet (GitOps applies objects in no promised order)
      // holds the run back, as a missing Workflow does, rather than failing it.
      const resolved = await this.options.source(workflow);
      if (!resolved.ready) return this.wait(resource, `Workflow ${workflowName} has no script yet: ${resolved.message}; the run starts once it has`);
      const checkout = (await this.options.checkout?.(workflow)) ?? null;
      if (checkout && !checkout.ok) return this.wait(resource, `Workflow ${workflowName} has no checkout files yet: ${checkout.message}; the run starts once it has`);
      try {
        // Stored before the run exists: its first pass may run `spool checkout` at once.
        if (checkout) await storeWorkflowCheckout(store, runId, checkout.files);
        run = await this.admit(resource, runId, workflow, resolved.source);
      } catch (error) {
        // Bad input (a pipeline document with a mistake, say) is not retried: it fails the Run.
        if (error instanceof TerminalError) return this.refuse(resource, runId, error.message);
        throw error;
      }
    }
    const labels = resource.metadata.labels ?? {};
    // Labelled with its Workflow, however it was made (`kubectl get runs -l hyperspool.dev/workflow=refund`),
    // and a rerun with its source (`-l hyperspool.dev/rerun-of=NAME`), where the name is a label value.
    const workflowName = resource.spec.workflowRef.name;
    const workflowLabel = !labels[LABELS.workflow] && workflowName.length <= 63 ? { [LABELS.workflow]: workflowName } : {};
    if (!labels[LABELS.run] || Object.keys(workflowLabel).length > 0) {
      const source = resource.spec.rerunOf?.name;
      const rerunOf = source && source.length <= 63 && !labels[LABELS.rerunOf] ? { [LABELS.rerunOf]: source } : {};
      await resources.patchMetadata(RUN.plural, namespace, name, { labels: { [LABELS.run]: runKey(runId), ...workflowLabel, ...rerunOf } });
    }
    await this.writeStatus(resource, run);
    return this.untilWake(run);
  }

  /**
   * A run asleep (a timer, a wait's deadline) is looked at again at its wake time, not by a sweep:
   * then it is due, and the executor is told at once.
   */
  private untilWake(run: RunRecord): ReconcileResult {
    if (run.status !== 'waiting' || !run.wakeAt) return {};
    const ms = run.wakeAt.getTime() - this.options.now().getTime();
    if (ms > 0) return { requeueAfterMs: ms };
    this.options.poke();
    return {};
  }

  private async admit(resource: Run, runId: string, workflow: Workflow, source: ScriptSource): Promise<RunRecord> {
    const namespace = resource.metadata.namespace ?? 'default';
    const input = resource.spec.input ?? null;
    if (resource.spec.rerunOf) return this.admitRerun(resource, runId, workflow, source);
    const rules = runsInProcess(source) ? documentAdmission(source.script, workflow.spec.filename, input) : null;
    const { run } = await submitRun(
      this.options.store,
      {
        runId,
        env: CLUSTER_ENV,
        project: namespace,
        source,
        input,
        idempotencyKey: resource.spec.idempotencyKey ?? null,
        lenient: resource.spec.lenient ?? workflow.spec.lenient ?? false,
        subject: resource.spec.subject ?? null,
        concurrency: rules?.concurrency ?? null,
        throttle: rules?.throttle ?? null,
      },
      this.options.now(),
    );
    this.options.poke();
    return run;
  }

  /**
   * A Run whose spec.rerunOf names another (docs/testing-workflows.md): a rerun of that run, from
   * the top or from a step, whose journal prefix is copied as the run is made (engine/rerun.ts).
   * A source that is not there, or a step it never reached, fails the Run: nothing to retry.
   */
  private async admitRerun(resource: Run, runId: string, workflow: Workflow, latest: ScriptSource): Promise<RunRecord> {
    const { store } = this.options;
    const namespace = resource.metadata.namespace ?? 'default';
    const { name, fromStep, latest: useLatest } = resource.spec.rerunOf ?? { name: '' };
    // A Run by name, or the key of an archived run whose Run is gone (as spool's run arguments are).
    const sourceRun = this.options.run?.(namespace, name);
    const oldId = sourceRun?.status?.runId ?? (RUN_KEY.test(name) ? runIdOf(namespace, name) : null);
    const old = oldId ? await store.getRun(oldId) : null;
    if (!old) throw new TerminalError('usage', `spec.rerunOf names ${name}, which is neither a Run admitted in namespace ${namespace} nor a run in the store`);
    const source = useLatest ? latest : { workflow: old.workflow, interpreter: old.interpreter, script: old.script, cwd: old.cwd, runner: old.runner };
    const input = resource.spec.input ?? old.input;
    const rules = runsInProcess(source) ? documentAdmission(source.script, workflow.spec.filename, input) : null;
    const rerun = { fromStep: fromStep ?? null, source, input, admission: { runId, env: CLUSTER_ENV, concurrency: rules?.concurrency ?? null } };
    const { run } = await rerunRun(store, old, rerun, this.options.now());
    this.options.poke();
    return run;
  }

  /** Writes the status the store's record calls for, and an Event when the phase changes. */
  async writeStatus(resource: Run, run: RunRecord): Promise<void> {
    const namespace = resource.metadata.namespace ?? 'default';
    const name = resource.metadata.name ?? '';
    const told = run.status === 'failed' ? { ...run, error: await failureDetail(this.options.store, run) } : run;
    const desired = desiredRunStatus(resource, told, this.options.podTrouble?.(run.id));
    const patch = statusPatch(resource.status, desired);
    if (!patch) return;
    await this.options.resources.patchStatus(RUN.plural, namespace, name, patch);
    const previous = resource.status?.phase;
    if (previous === desired.phase) return;
    this.options.onPhase?.(run, previous);
    const target = { kind: RUN.kind, name, namespace, ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}) };
    // The moments a person looks for in `kubectl describe run`, and nothing for a run merely pending.
    if (desired.phase === 'Pending') return;
    const warning = desired.phase === 'Failed';
    const detail = desired.phase === 'Waiting' ? `suspended, awaiting ${run.awaiting ?? ''}` : desired.phase === 'Running' ? `pass ${run.passes} started` : (told.error ?? `run ${desired.phase.toLowerCase()}`);
    await this.options.events.record(target, warning ? 'Warning' : 'Normal', desired.phase, detail);
  }

  /**
   * A Run whose run left the store: the archive's retention deleted a finished one (its status is
   * what remains of it, and stays), or the database was replaced or restored from an earlier
   * backup under an unfinished one, which fails rather than start again from the top.
   */
  private async lost(resource: Run, runId: string): Promise<ReconcileResult> {
    if (isFinishedPhase(resource.status?.phase)) return {};
    const message = `its run ${runId} is no longer in the database (replaced, or restored from an earlier backup); it is not started again, so nothing it already did runs twice`;
    return this.refuse(resource, runId, message, 'RunLost');
  }

  /** A terminal error, in the Run's status: nothing retries it (the Run failed). */
  private async refuse(resource: Run, runId: string, message: string, reason = 'Invalid'): Promise<ReconcileResult> {
    const terminal = { terminal: message };
    if (resource.status?.phase === 'Failed' && resource.status.message === message) return terminal;
    const namespace = resource.metadata.namespace ?? 'default';
    const name = resource.metadata.name ?? '';
    const generation = resource.metadata.generation;
    await this.options.resources.patchStatus(RUN.plural, namespace, name, {
      runId,
      phase: 'Failed',
      message,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      conditions: [
        { type: 'Succeeded', status: 'False', reason, message, lastTransitionTime: apiTime(this.options.now()), ...(generation !== undefined ? { observedGeneration: generation } : {}) },
      ],
    });
    const target = { kind: RUN.kind, name, namespace, ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}) };
    await this.options.events.record(target, 'Warning', reason, message);
    return terminal;
  }

  /** The Run stays Pending, saying what it waits for, and looks again soon (a ConfigMap's arrival is no event here). */
  private async wait(resource: Run, message: string): Promise<ReconcileResult> {
    const namespace = resource.metadata.namespace ?? 'default';
    const again = { requeueAfterMs: this.options.lookAgainMs };
    if (resource.status?.message === message) return again;
    await this.options.resources.patchStatus(RUN.plural, namespace, resource.metadata.name ?? '', {
      runId: RunReconciler.runIdOf(resource),
      phase: 'Pending',
      message,
      observedGeneration: resource.metadata.generation,
    });
    return again;
  }
}
