import type { KubernetesObject, V1Job, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../common/json-log.js';
import type { Store } from '../../store/store.js';
import type { ActivityClass, Handler, Run, Schedule, Workflow } from '../api/generated.js';
import type { Informer } from '../kube/informer.js';
import type { OperatorMetrics } from '../kube/metrics.js';
import { objectKey } from '../kube/object-key.js';
import type { Resources } from '../resources.js';
import type { EventRecorder } from '../runs/events.js';

/** The kinds the work queue holds keys of, each reconciled by its own controller. */
export type Kind = 'Run' | 'Handler' | 'Schedule' | 'Workflow';

/** An object's key in the work queue: `Kind/namespace/name`. */
export const queueKey = (kind: Kind, object: KubernetesObject): string => `${kind}/${objectKey(object)}`;

/** The leader's caches, one informer per resource it watches. */
export interface Informers {
  workflows: Informer<Workflow>;
  runs: Informer<Run>;
  handlers: Informer<Handler>;
  schedules: Informer<Schedule>;
  pods: Informer<V1Pod>;
  jobs: Informer<V1Job>;
  activityClasses: Informer<ActivityClass>;
}

/** What every controller is handed by the wiring (controllers/index.ts). */
export interface ControllerContext {
  readonly store: Store;
  readonly resources: Resources;
  readonly events: EventRecorder;
  readonly metrics: OperatorMetrics;
  readonly log: Logger;
  now: () => Date;
  /** The caches: started before any handler, reconcile or sweep runs, so read them only then. */
  readonly informers: Informers;
  /** Look at this object again: it changed. */
  enqueue: (kind: Kind, object: KubernetesObject) => void;
  /** enqueue, for a sweep's look: a key failing meanwhile keeps its backoff. */
  nudge: (kind: Kind, object: KubernetesObject) => void;
  /** New work in the store: the executor looks now. */
  poke: () => void;
  /** Does this replica lead the run's shard now (src/operator/shards)? Only its leader writes to a run. */
  ownsRun: (runId: string) => boolean;
  /** Does it lead shard 0, whose leader has the cluster-wide work (Workflows, Handlers, Schedules)? */
  ownsClusterWide: () => boolean;
}
