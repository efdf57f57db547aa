import { createHash } from 'node:crypto';

// A run's passes are separate processes (pods, on a cluster) and a run may take days, so nothing
// holds a run's trace between them: its ids are derived from the run id, and each pass, wherever
// it runs, finds the same trace and the same parents. Hashed with a purpose in front, so no two
// ids of one run coincide.

function hex(what: string, bytes: number): string {
  return createHash('sha256').update(what).digest('hex').slice(0, bytes * 2);
}

/** The run's trace id: the first 16 bytes of sha256("trace " + run id). */
export function runTraceId(runId: string): string {
  return hex(`trace ${runId}`, 16);
}

/** The span id of the run's own span, every pass's parent. */
export function runSpanId(runId: string): string {
  return hex(`run ${runId}`, 8);
}

/** The span id of one pass of the run, its calls' parent. */
export function passSpanId(runId: string, pass: number): string {
  return hex(`pass ${runId} ${pass}`, 8);
}
