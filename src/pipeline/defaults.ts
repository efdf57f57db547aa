/** Limits and the values a pipeline gets for keys it leaves out (documented in docs/pipelines.md). */

/** fan_out items per job, the documented cap; more belongs in a script with `spool activity submit`, which has none. */
export const MAX_FAN_OUT_ITEMS = 100;

/** `retry: N` and `retry: {attempts}` wait this long before the second attempt, doubling after. */
export const DEFAULT_RETRY_BACKOFF_MS = 1000;

export const DEFAULT_CONCURRENCY_POLICY = 'queue';
export const DEFAULT_THROTTLE_BURST = 1;
export const DEFAULT_THROTTLE_POLICY = 'queue';
