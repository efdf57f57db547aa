/**
 * What a call does when the agent answers `suspended`: the agent is ending this process group, and
 * code after a wait that has not returned must never run. So the call's promise never settles, not
 * even with an error a `catch` could swallow.
 */

/** Time the agent has to end the process before the script gives up on it and exits by itself. */
const FALLBACK_MS = 60_000;

/** Exit code when the agent never ended the process (EX_TEMPFAIL: the run is retried). */
const FALLBACK_EXIT = 75;

export type SuspendHandler = (message: string) => Promise<never>;

/** Set by the first suspension: the agent ends the whole pass, so one line says why. */
let ending: Promise<never> | undefined;

const waitToBeEnded: SuspendHandler = (message) => {
  // Calls awaited together (Promise.all over sleeps, signals...) are each answered `suspended`;
  // they all wait for the same end, and a line per call would only repeat the first.
  if (ending) return ending;
  process.stderr.write(`spool: ${message}\n`);
  ending = new Promise<never>(() => {
    // A referenced timer keeps the process alive until the agent's signal lands; without it, a
    // script whose last work was this call would exit on its own with the call unanswered.
    setTimeout(() => process.exit(FALLBACK_EXIT), FALLBACK_MS);
  });
  return ending;
};

let handler: SuspendHandler = waitToBeEnded;

export function suspend(message: string): Promise<never> {
  return handler(message);
}

/**
 * Replaces what a suspension does (tests record it instead of waiting to be killed); returns the
 * handler it replaced.
 */
export function setSuspendHandler(next: SuspendHandler): SuspendHandler {
  const previous = handler;
  handler = next;
  return previous;
}
