import type { Handler } from '../api/generated.js';
import type { ReconcileResult } from '../kube/work-queue.js';
import type { TriggerReconciler } from '../triggers/trigger-reconciler.js';
import type { ControllerContext } from './context.js';

/** Handlers: the store's handler record follows the resource (the reconcile is TriggerReconciler's, shared with Schedules). */
export class HandlerController {
  constructor(
    private readonly context: ControllerContext,
    private readonly triggers: TriggerReconciler,
  ) {}

  readonly handlers = {
    onAdd: (handler: Handler): void => this.context.enqueue('Handler', handler),
    onUpdate: (handler: Handler): void => this.context.enqueue('Handler', handler),
    onDelete: (handler: Handler): void => void this.triggers.deleted('Handler', handler.metadata.namespace ?? 'default', handler.metadata.name ?? ''),
  };

  async reconcile(namespace: string | undefined, name: string): Promise<ReconcileResult | void> {
    const handler = this.context.informers.handlers.get(namespace, name);
    if (handler) await this.triggers.reconcileHandler(handler);
  }
}
