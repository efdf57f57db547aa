import type { RunRecord } from '../store/types.js';

/** The input document a script reads from $SPOOL_INPUT_FILE, wherever its pass runs. */
export function inputDocument(run: RunRecord): Record<string, unknown> {
  const input = (run.input ?? null) as Record<string, unknown> | null;
  const event = run.handler ? input : null;
  return {
    run: run.id,
    subject: run.subject,
    input,
    payload: event ? (event.payload ?? null) : input,
    ...(event ? { event } : {}),
  };
}
