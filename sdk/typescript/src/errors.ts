/**
 * The three kinds of failure a durable call can end in (docs/sdks.md, "Answers, and the three kinds
 * of failure"). Tell them apart with `instanceof` or by `code`, which stays the same across releases.
 */

export type SpoolErrorCode = 'step_failed' | 'script_error' | 'agent_unavailable';

/** What the agent said was wrong with a request; the same kinds as the protocol's `error` answer. */
export type ScriptErrorKind = 'usage' | 'determinism' | 'limit' | 'internal';

export abstract class SpoolError extends Error {
  abstract readonly code: SpoolErrorCode;
}

/**
 * A step or activity ran and its command exited non-zero. Catch it to branch on the failure; the
 * result is recorded, so a replay raises the same failure again without running the command.
 */
export class StepFailed extends SpoolError {
  readonly code = 'step_failed';
  override readonly name = 'StepFailed';

  constructor(
    /** The step's or activity's name. */
    readonly step: string,
    readonly exitCode: number,
    readonly stdout: string,
    detail?: string,
  ) {
    super(`${step} failed with exit code ${exitCode}${detail ? `: ${detail}` : ''}`);
  }
}

/**
 * The agent refused the request, or the SDK refused it before sending: a bug in the script that a
 * replay will not fix (a reused activity name, a second lock, a bad argument, a result over the
 * limit, a replay that reached another call than the journal has).
 */
export class ScriptError extends SpoolError {
  readonly code = 'script_error';
  override readonly name = 'ScriptError';

  constructor(
    readonly kind: ScriptErrorKind,
    message: string,
    /** The exit code the `spool` CLI would have exited with for the same answer. */
    readonly exitCode: number = kind === 'usage' ? 2 : 1,
  ) {
    super(message);
  }
}

/**
 * No agent to talk to, or it went away mid-call. The run is handed to another agent and replays from
 * the top; do not catch this and carry on (re-throw it from any catch-all).
 */
export class AgentUnavailable extends SpoolError {
  readonly code = 'agent_unavailable';
  override readonly name = 'AgentUnavailable';
}
