import { isDeepStrictEqual } from 'node:util';
import type { Condition } from './api/generated.js';
import { apiTime } from './api-time.js';
import type { Resources } from './resources.js';

export interface Readiness {
  ready: boolean;
  reason: string;
  message: string;
}

interface WithStatus {
  metadata: { name?: string; namespace?: string; generation?: number };
  status?: { conditions?: Condition[] };
}

/**
 * Writes a resource's `Ready` condition and the rest of its status, only when something changed:
 * a resync writes nothing, and lastTransitionTime moves only when Ready flips (GitOps tools diff
 * status too, so it must not churn).
 */
export async function writeReady(resources: Resources, plural: string, resource: WithStatus, readiness: Readiness, extra: Record<string, unknown> = {}): Promise<void> {
  const previous = resource.status?.conditions?.find((c) => c.type === 'Ready');
  const status = readiness.ready ? 'True' : 'False';
  const generation = resource.metadata.generation;
  const condition: Condition = {
    type: 'Ready',
    status,
    reason: readiness.reason,
    message: readiness.message,
    lastTransitionTime: previous?.status === status ? previous.lastTransitionTime : apiTime(new Date()),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  const desired = { ...extra, conditions: [condition], ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  const current = resource.status as Record<string, unknown> | undefined;
  // Only the keys written here are compared: the others are not this writer's.
  // A null removes a key (a merge patch), so an absent key is already what a null asks for.
  // Compared as values: the API server answers with its keys in alphabetical order (run-status.ts).
  const changed = Object.entries(desired).some(([key, value]) => !isDeepStrictEqual(current?.[key] ?? null, value ?? null));
  if (changed) await resources.patchStatus(plural, resource.metadata.namespace ?? 'default', resource.metadata.name ?? '', desired);
}
