import { parseDuration } from '../../common/duration.js';
import { checkCron, nextTick, resumeSchedule, type Cadence } from '../../engine/schedules.js';
import { ensureError } from '../../common/errors.js';
import type { Store } from '../../store/store.js';
import { HANDLER, SCHEDULE, type Handler, type Schedule, type Workflow } from '../api/generated.js';
import type { Resources } from '../resources.js';
import type { ResolvedSource } from '../workflow-source.js';
import { apiTime } from '../api-time.js';
import { writeReady } from '../ready-condition.js';
import type { ReconcileResult } from '../kube/work-queue.js';

export interface TriggerReconcilerOptions {
  store: Store;
  resources: Resources;
  workflow(namespace: string, name: string): Workflow | null;
  /** What a run of that Workflow starts from (its script read from its ConfigMap, if it names one). */
  source(workflow: Workflow): Promise<ResolvedSource>;
  now(): Date;
  poke(): void;
  /** How soon a trigger waiting for its Workflow's script, or past a tick, looks again. */
  lookAgainMs: number;
  /** The name of a run's Run resource, once there is one (`kubectl get run NAME`). */
  runName(runId: string): string | null;
  /** A Warning Event on the Schedule. */
  warn(schedule: Schedule, reason: string, message: string): void;
}

/**
 * Handler and Schedule resources drive the same handler and schedule records the dev server keeps:
 * the engine delivers events to handlers and ticks schedules the same way in both places.
 */
export class TriggerReconciler {
  constructor(private readonly options: TriggerReconcilerOptions) {}

  async reconcileHandler(handler: Handler): Promise<void> {
    const namespace = handler.metadata.namespace ?? 'default';
    const name = handler.metadata.name ?? '';
    const resolved = await this.source(namespace, handler.spec.workflowRef.name);
    if (resolved.ready) {
      await this.options.store.putHandler({ project: namespace, name, eventType: handler.spec.event, ...resolved.source });
    } else {
      await this.options.store.deleteHandler(namespace, name);
    }
    await this.writeConditions(HANDLER.plural, handler, resolved, {});
  }

  /**
   * The store's schedule record follows the Schedule, and the status the record: looked at again
   * at its next tick (the executor ticks it then), or soon while that tick is not in the record.
   */
  async reconcileSchedule(schedule: Schedule): Promise<ReconcileResult> {
    const { store } = this.options;
    const namespace = schedule.metadata.namespace ?? 'default';
    const name = schedule.metadata.name ?? '';
    // A cadence that does not parse cannot change until the spec does: say so in Ready, tick
    // nothing, and do not fail the reconcile (its retries would only log the same error forever).
    const problem = cadenceProblem(schedule);
    const resolved = problem ? null : await this.source(namespace, schedule.spec.workflowRef.name);
    const source = resolved?.ready ? resolved.source : null;
    const suspended = schedule.spec.suspend === true;
    const existing = (await store.listSchedules(namespace)).find((record) => record.name === name);
    if (!source) {
      if (existing) await store.deleteSchedule(namespace, name);
    } else {
      const cadence: Cadence = schedule.spec.cron ? { everyMs: null, cron: schedule.spec.cron } : { everyMs: parseDuration(schedule.spec.every ?? '1m'), cron: null };
      const options = { input: schedule.spec.input ?? null, overlap: schedule.spec.overlap === 'Allow' ? ('allow' as const) : ('skip' as const) };
      const wanted = { ...cadence, ...source, ...options };
      const unchanged = existing && Object.entries(wanted).every(([key, value]) => JSON.stringify(existing[key as keyof typeof existing] ?? null) === JSON.stringify(value ?? null));
      if (!unchanged) {
        // A new schedule asked to run on create is due at once; its next ticks follow its cadence.
        const first = !existing && !suspended && schedule.spec.runOnCreate === true && !schedule.status?.lastScheduleTime;
        // Only a new cadence moves the next tick: the source holds the Workflow's script, and a
        // script rolled out daily must not push a daily tick back a day each time (keepNextAt).
        await store.putSchedule({ project: namespace, name, ...wanted, nextAt: first ? this.options.now() : nextTick(cadence, this.options.now()) }, { keepNextAt: true });
        this.options.poke();
      }
      // A suspended Schedule keeps its record, suspended as `spool schedule suspend` leaves one on
      // `spool dev`, so the lists show it (suspended, no next tick) and the executor ticks it not;
      // resumed, its next tick is counted from then.
      if (suspended) await store.suspendSchedule(namespace, name, this.options.now());
      else if (existing?.suspendedAt) await resumeSchedule(store, namespace, name, this.options.now());
    }
    const record = (await store.listSchedules(namespace)).find((item) => item.name === name);
    const lastRun = record?.lastRunId ? await store.getRun(record.lastRunId) : null;
    // LAST RUN names the Run resource `kubectl get run` finds, which the operator makes for the run
    // a moment after the tick: until it is there, the Schedule looks again soon.
    const lastRunName = lastRun ? this.options.runName(lastRun.id) : null;
    const status = {
      // A suspended Schedule, or one that cannot tick, has no next tick.
      nextScheduleTime: record && !record.suspendedAt ? apiTime(record.nextAt) : null,
      ...(record ? { skipped: record.skipped } : {}),
      ...(lastRun && lastRunName ? { lastRunName, lastScheduleTime: apiTime(lastRun.createdAt) } : {}),
    };
    if (problem) {
      // Said once per spec (an Event beside Ready), not at every look.
      const ready = schedule.status?.conditions?.find((condition) => condition.type === 'Ready');
      if (ready?.reason !== problem.reason || ready.observedGeneration !== schedule.metadata.generation) this.options.warn(schedule, problem.reason, problem.message);
      await writeReady(this.options.resources, SCHEDULE.plural, schedule, { ready: false, ...problem }, status);
      return { terminal: problem.message };
    }
    // (resolved is null only beside a problem, answered above.)
    if (suspended || !resolved) {
      await writeReady(this.options.resources, SCHEDULE.plural, schedule, { ready: false, reason: 'Suspended', message: 'suspended' }, status);
      return {};
    }
    await this.writeConditions(SCHEDULE.plural, schedule, resolved, status);
    const untilTick = record ? record.nextAt.getTime() - this.options.now().getTime() : 0;
    return { requeueAfterMs: untilTick > 0 && !(lastRun && !lastRunName) ? untilTick : this.options.lookAgainMs };
  }

  async deleted(kind: 'Handler' | 'Schedule', namespace: string, name: string): Promise<void> {
    if (kind === 'Handler') await this.options.store.deleteHandler(namespace, name);
    else await this.options.store.deleteSchedule(namespace, name);
  }

  private async source(namespace: string, workflowName: string): Promise<ResolvedSource> {
    const workflow = this.options.workflow(namespace, workflowName);
    if (!workflow) return { ready: false, reason: 'WorkflowNotFound', message: `Workflow ${workflowName} not found in namespace ${namespace}` };
    const resolved = await this.options.source(workflow);
    return resolved.ready ? resolved : { ...resolved, message: `Workflow ${workflowName} has no script yet: ${resolved.message}` };
  }

  /**
   * `Ready` says whether the trigger is live: its Workflow exists and its script can be read
   * (the reason says which is missing: WorkflowNotFound, ConfigMapNotFound...).
   */
  private async writeConditions(plural: string, resource: Handler | Schedule, resolved: ResolvedSource, extra: Record<string, unknown>): Promise<void> {
    const readiness = resolved.ready
      ? { ready: true, reason: 'WorkflowFound', message: `runs Workflow ${resource.spec.workflowRef.name}` }
      : { ready: false, reason: resolved.reason, message: resolved.message };
    await writeReady(this.options.resources, plural, resource, readiness, extra);
  }
}

/** Why a Schedule's cron or every cannot be used, in the parser's words; null when it can. */
function cadenceProblem(schedule: Schedule): { reason: string; message: string } | null {
  try {
    if (schedule.spec.cron) checkCron(schedule.spec.cron);
    else parseDuration(schedule.spec.every ?? '1m');
    return null;
  } catch (error) {
    return { reason: schedule.spec.cron ? 'InvalidCron' : 'InvalidEvery', message: ensureError(error).message };
  }
}
