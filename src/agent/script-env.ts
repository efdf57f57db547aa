import { fstatSync } from 'node:fs';

/** What a pass tells its script (docs/protocol.md): where the agent is, which run, pass and input. */
export interface ScriptContext {
  socket: string;
  runId: string;
  pass: number;
  inputFile: string;
  /** Where the script's output goes, so the client does not print replayed output into it again. */
  output: 'inherit' | number;
}

/**
 * The SPOOL_* variables of a script's environment, the same wherever its pass runs.
 * SPOOL_ACTIVITY_ID is one constant for the whole job (its run, every pass), as an activity's is for
 * its attempts: the seeds warn against it as an idempotency key, which is SPOOL_IDEMPOTENCY_KEY's job.
 */
export function scriptEnv(context: ScriptContext): Record<string, string> {
  return {
    SPOOL_SOCKET: context.socket,
    SPOOL_RUN_ID: context.runId,
    SPOOL_ACTIVITY_ID: context.runId,
    SPOOL_PASS: String(context.pass),
    SPOOL_INPUT_FILE: context.inputFile,
    SPOOL_LOG_ID: outputIdentity(context.output),
  };
}

/** The identity of what a descriptor writes to, so the in-script client can tell when its stdout is the run's log. */
function outputIdentity(output: 'inherit' | number): string {
  try {
    const stat = fstatSync(output === 'inherit' ? 1 : output);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return '';
  }
}
