import type { RunnerSettings, ScriptSource } from '../store/types.js';

/**
 * Where a run keeps the fan_out bodies it was admitted with (on a cluster: the Workflows its
 * fan_outs name, src/operator/fan-out-bodies.ts), in its `runner`, the settings the engine carries
 * opaquely with a run: body name -> what each item's child run runs.
 */
export const BODIES = 'fanOutBodies';

/** A fan_out body as pinned: the child's source, its pod settings included. */
export type PinnedBody = Pick<ScriptSource, 'workflow' | 'interpreter' | 'script' | 'runner'>;

/** The body of this name pinned in a run's settings, if the run has one. */
export function pinnedBody(runner: RunnerSettings | null | undefined, name: string): PinnedBody | null {
  const bodies = runner?.[BODIES] as Record<string, PinnedBody> | undefined;
  return bodies && Object.hasOwn(bodies, name) ? (bodies[name] ?? null) : null;
}

/** Whether a run's settings pin fan_out bodies at all (a run admitted on a cluster with one). */
export const pinsBodies = (runner: RunnerSettings | null | undefined): boolean => runner?.[BODIES] !== undefined;
