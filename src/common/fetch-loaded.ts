import { onFirstUse } from './on-first-use.js';

/**
 * Node compiles its fetch (undici) at the first call: most of 100 ms on a busy machine. Awaited
 * (or started) before a request whose timing matters, so that request does not pay for it: a pass
 * pod's agent starts it as soon as it listens, and a fan_out's rate waits for it before its first
 * send. A data: URL reaches no one; once per process.
 */
export const fetchLoaded = onFirstUse(() =>
  fetch('data:,').then(
    (response) => void response.arrayBuffer().catch(() => undefined),
    () => undefined,
  ),
);
