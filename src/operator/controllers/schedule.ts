import type { Schedule } from '../api/generated.js';
import type { ReconcileResult } from '../kube/work-queue.js';
import type { TriggerReconciler } from '../triggers/trigger-reconciler.js';
import type { ControllerContext } from './context.js';

/** Schedules: the store's schedule record follows the resource, and its status the record's ticks (TriggerReconciler's, shared with Handlers). */
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
    if (schedule) await this.triggers.reconcileSchedule(schedule);
  }

  /** The executor ticks schedules in the store: their status (next and last tick, skipped) follows. */
  sweep(): void {
    for (const schedule of this.context.informers.schedules.list()) this.context.nudge('Schedule', schedule);
  }
}
