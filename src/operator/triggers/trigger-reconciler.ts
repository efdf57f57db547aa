import { parseDuration } from '../../common/duration.js';
import { nextTick, type Cadence } from '../../engine/schedules.js';
import type { Store } from '../../store/store.js';
import type { ScriptSource } from '../../store/types.js';
import { HANDLER, SCHEDULE, type Condition, type Handler, type Schedule, type Workflow } from '../api/generated.js';
import { runKey } from '../naming.js';
import type { Resources } from '../resources.js';
import { workflowSource } from '../workflow-source.js';
import { apiTime } from '../api-time.js';

export interface TriggerReconcilerOptions {
  store: Store;
  resources: Resources;
  workflow(namespace: string, name: string): Workflow | null;
  now(): Date;
  poke(): void;
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
    const source = this.source(namespace, handler.spec.workflowRef.name);
    if (source) {
      await this.options.store.putHandler({ project: namespace, name, eventType: handler.spec.event, ...source });
    } else {
      await this.options.store.deleteHandler(namespace, name);
    }
    await this.writeConditions(HANDLER.plural, handler, source, {});
  }

  async reconcileSchedule(schedule: Schedule): Promise<void> {
    const { store } = this.options;
    const namespace = schedule.metadata.namespace ?? 'default';
    const name = schedule.metadata.name ?? '';
    const source = schedule.spec.suspend ? null : this.source(namespace, schedule.spec.workflowRef.name);
    const existing = (await store.listSchedules(namespace)).find((record) => record.name === name);
    if (!source) {
      if (existing) await store.deleteSchedule(namespace, name);
    } else {
      const cadence: Cadence = schedule.spec.cron ? { everyMs: null, cron: schedule.spec.cron } : { everyMs: parseDuration(schedule.spec.every ?? '1m'), cron: null };
      const unchanged =
        existing &&
        existing.everyMs === cadence.everyMs &&
        existing.cron === cadence.cron &&
        existing.script === source.script &&
        existing.workflow === source.workflow &&
        existing.interpreter === source.interpreter;
      // Writing an unchanged schedule again would move its next tick: a resync must not.
      if (!unchanged) {
        await store.putSchedule({ project: namespace, name, ...cadence, ...source, nextAt: nextTick(cadence, this.options.now()) });
        this.options.poke();
      }
    }
    const record = (await store.listSchedules(namespace)).find((item) => item.name === name);
    const status = record
      ? {
          nextScheduleTime: apiTime(record.nextAt),
          skipped: record.skipped,
          ...(record.lastRunId ? { lastRunName: runKey(record.lastRunId) } : {}),
        }
      : {};
    const message = schedule.spec.suspend ? 'suspended' : undefined;
    await this.writeConditions(SCHEDULE.plural, schedule, source ?? (schedule.spec.suspend ? null : undefined), status, message);
  }

  async deleted(kind: 'Handler' | 'Schedule', namespace: string, name: string): Promise<void> {
    if (kind === 'Handler') await this.options.store.deleteHandler(namespace, name);
    else await this.options.store.deleteSchedule(namespace, name);
  }

  private source(namespace: string, workflowName: string): ScriptSource | null {
    const workflow = this.options.workflow(namespace, workflowName);
    return workflow ? workflowSource(workflow) : null;
  }

  /** `Ready` says whether the trigger is live; only a change is written (no churning status). */
  private async writeConditions(
    plural: string,
    resource: Handler | Schedule,
    source: ScriptSource | null | undefined,
    extra: Record<string, unknown>,
    suspendedMessage?: string,
  ): Promise<void> {
    const namespace = resource.metadata.namespace ?? 'default';
    const workflowName = resource.spec.workflowRef.name;
    const ready = Boolean(source);
    const message = suspendedMessage ?? (ready ? `runs Workflow ${workflowName}` : `Workflow ${workflowName} not found in namespace ${namespace}`);
    const previous = resource.status?.conditions?.find((c) => c.type === 'Ready');
    const generation = resource.metadata.generation;
    const condition: Condition = {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: suspendedMessage ? 'Suspended' : ready ? 'WorkflowFound' : 'WorkflowNotFound',
      message,
      lastTransitionTime: previous?.status === (ready ? 'True' : 'False') ? previous.lastTransitionTime : apiTime(new Date()),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
    const desired = { ...extra, conditions: [condition], ...(generation !== undefined ? { observedGeneration: generation } : {}) };
    const current = resource.status as Record<string, unknown> | undefined;
    const changed = Object.entries(desired).some(([key, value]) => JSON.stringify(current?.[key]) !== JSON.stringify(value));
    if (changed) await this.options.resources.patchStatus(plural, namespace, resource.metadata.name ?? '', desired);
  }
}
