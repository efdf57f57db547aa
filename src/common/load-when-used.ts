import { createRequire } from 'node:module';
import { onFirstUse } from './on-first-use.js';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded the first time it is used, not when the module naming it loads: for
 * a package most commands never use (cron-parser and its luxon: 30 ms of every `spool run`).
 * Synchronous, as `require` is, so the functions using it stay so.
 */
export function loadWhenUsed<T>(name: string): () => T {
  return onFirstUse(() => require(name) as T);
}
