import { jsonOrText, ok, text } from './answers.js';
import { requireAgent } from './capabilities.js';
import { wholeMs } from './checks.js';
import { send } from './connection.js';
import { EXIT_TIMED_OUT, type OkAnswer } from './protocol.js';

export interface WaitOptions {
  /** Give up after this many milliseconds: the call then returns null. */
  timeoutMs?: number;
}

/**
 * Waits `ms` milliseconds, durably: the run holds no process meanwhile and the script resumes from
 * the top once the time has come. Do not wrap it in a catch: the call does not return until the time
 * has come, and the process is ended in between.
 */
export async function sleep(ms: number): Promise<void> {
  await ok(await send({ verb: 'sleep', ms: wholeMs(ms, 'sleep') }));
}

async function bounded(call: string, verb: string, options: WaitOptions): Promise<{ timeoutMs?: number }> {
  if (options.timeoutMs === undefined) return {};
  const timeoutMs = wholeMs(options.timeoutMs, call);
  await requireAgent(`${call} with a timeout`, verb);
  return { timeoutMs };
}

const timedOut = (answer: OkAnswer): boolean => answer.exitCode === EXIT_TIMED_OUT;

/** Waits for the signal `name` sent to this run; returns its payload text, or null on a timeout. */
export async function waitSignal(name: string, options: WaitOptions = {}): Promise<string | null> {
  const deadline = await bounded('wait_signal', 'wait.signal', options);
  const answer = await ok(await send({ verb: 'wait.signal', name, ...deadline }));
  return timedOut(answer) ? null : text(answer);
}

/**
 * Waits for an event of `type` (emitted after the wait began, about this run's subject or none);
 * returns its payload as parsed JSON (null when it had none), or null on a timeout.
 */
export async function waitEvent<T = unknown>(type: string, options: WaitOptions = {}): Promise<T | null> {
  const deadline = await bounded('wait_event', 'wait.event', options);
  const answer = await ok(await send({ verb: 'wait.event', type, ...deadline }));
  if (timedOut(answer)) return null;
  const payload = text(answer);
  return (payload === '' ? null : jsonOrText(payload)) as T | null;
}
