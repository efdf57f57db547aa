import type { Schedule } from '../api/generated.js';
import type { ReconcileResult } from '../kube/work-queue.js';
import type { TriggerReconciler } from '../triggers/trigger-reconciler.js';
import type { ControllerContext } from './context.js';

/** Schedules: the store's schedule record follows the resource, and its status the record's ticks, looked at again at each (TriggerReconciler's, shared with Handlers). */
export class ScheduleController {
  constructor(
    private readonly context: ControllerContext,
    private readonly triggers: TriggerReconciler,
  ) {}

  readonly handlers = {
    onAdd: (schedule: Schedule): void => this.context.enqueue('Schedule', schedule),
    onUpdate: (schedule: Schedule): void => this.context.enqueue('Schedule', schedule),
    onDelete: (schedule: Schedule): void => void this.triggers.deleted('Schedule', schedule.metadata.namespace ?? 'default', schedule.metadata.name ?? ''),
  };

  async reconcile(namespace: string | undefined, name: string): Promise<ReconcileResult | void> {
    const schedule = this.context.informers.schedules.get(namespace, name);
    // Looked at again at its next tick, when the executor ticks it in the store.
    if (schedule) return this.triggers.reconcileSchedule(schedule);
  }
}
