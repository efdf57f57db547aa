/**
 * The calls a rerun can start from (`fromStep` names one; src/engine/rerun.ts, and the run page's
 * "Rerun from here"): a script's steps, an SDK's step functions, and activities. A failed activity
 * is retried so: a new run whose activity and all after run fresh, with a new activity id, while
 * the old run's history stays as it was.
 */
export const RERUN_FROM_VERBS: readonly string[] = ['step', 'step_fn', 'activity.run', 'activity.submit'];
