import type { ActivityClass } from '../api/generated.js';

/** What a refused submit names as the one who offers capabilities on a cluster. */
export const OFFERED_BY = 'no ActivityClass on this cluster offers';

/** Every capability some ActivityClass offers, sorted: what an activity's --requires may name. */
export function offeredCapabilities(classes: readonly ActivityClass[]): string[] {
  return [...new Set(classes.flatMap((klass) => klass.spec.capabilities))].sort();
}

/**
 * Why an activity requiring these cannot run on this cluster though no capability is missing, if
 * it cannot: no ActivityClass at all, or none offering them all together.
 */
export function refusal(classes: readonly ActivityClass[], requires: readonly string[]): string | null {
  if (classFor(classes, requires)) return null;
  if (classes.length === 0)
    return 'no ActivityClass on this cluster runs activities; a cluster admin declares one (docs/operator.md, "Activities on a cluster")';
  return `no one ActivityClass on this cluster offers ${requires.map((c) => `'${c}'`).join(', ')} together`;
}

/**
 * The class an activity runs with: the first, by name, that offers every capability it requires,
 * so the same activity always gets the same pod whatever order the informer lists them in.
 */
export function classFor(classes: readonly ActivityClass[], requires: readonly string[]): ActivityClass | null {
  const byName = [...classes].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  return byName.find((klass) => requires.every((capability) => klass.spec.capabilities.includes(capability))) ?? null;
}
