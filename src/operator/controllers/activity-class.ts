import type { ActivityClass } from '../api/generated.js';
import { OFFERED_BY, offeredCapabilities, refusal } from '../activities/activity-classes.js';
import type { ControllerContext } from './context.js';

/**
 * ActivityClasses: cluster-scoped declarations of what activities may require and the pods their
 * attempts run in. Nothing to reconcile: the executor reads the cache, and looks again when one
 * appears or changes (an activity waiting for a capability may now run).
 */
export class ActivityClassController {
  constructor(private readonly context: ControllerContext) {}

  readonly handlers = {
    onAdd: (): void => this.context.poke(),
    onUpdate: (): void => this.context.poke(),
  };

  list(): ActivityClass[] {
    return this.context.informers.activityClasses.list();
  }

  /** What the executor asks of the classes: what they offer, and why an activity cannot run. */
  readonly executorOptions = {
    capabilities: (): string[] => offeredCapabilities(this.list()),
    capabilitiesOfferedBy: OFFERED_BY,
    activityRefusal: (requires: readonly string[]): string | null => refusal(this.list(), requires),
  };
}
