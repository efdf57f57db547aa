import type { ActivityClass } from '../api/generated.js';

/** What a refused submit names as the one who offers capabilities on a cluster. */
export const OFFERED_BY = 'no ActivityClass on this cluster offers';

/** Every capability some ActivityClass offers, sorted: what an activity's --requires may name. */
export function offeredCapabilities(classes: readonly ActivityClass[]): string[] {
  return [...new Set(classes.flatMap((klass) => klass.spec.capabilities))].sort();
}

/**
 * The class an activity runs with: the first, by name, that offers every capability it requires,
 * so the same activity always gets the same pod whatever order the informer lists them in.
 */
export function classFor(classes: readonly ActivityClass[], requires: readonly string[]): ActivityClass | null {
  const byName = [...classes].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  return byName.find((klass) => requires.every((capability) => klass.spec.capabilities.includes(capability))) ?? null;
}
