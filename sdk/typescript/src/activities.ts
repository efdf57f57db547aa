import { ok } from './answers.js';
import { requireAgent } from './capabilities.js';
import { checkArgv, wholeMs } from './checks.js';
import { send } from './connection.js';
import { ScriptError, StepFailed } from './errors.js';
import { outputOf } from './output.js';
import type { OkAnswer } from './protocol.js';

export interface ActivityOptions {
  /** Capabilities an agent must have to run it (e.g. `['shell']`). */
  requires?: string[];
  /** Tries after the first when it fails (default 0). */
  retries?: number;
  /** Wait before the first retry, doubling after each (default 1000). */
  retryBackoffMs?: number;
  /** Retry only on these exit codes (default: any non-zero). */
  retryOnExit?: number[];
}

function spec(name: string, argv: readonly string[], options: ActivityOptions): Record<string, unknown> {
  checkArgv(argv, `activity '${name}'`);
  const retries = options.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new ScriptError('usage', `activity '${name}': retries must be a whole number of at least 0, not ${String(retries)}`);
  }
  return {
    name,
    argv: [...argv],
    requires: options.requires ?? [],
    attempts: retries + 1,
    backoffMs: wholeMs(options.retryBackoffMs ?? 1000, `activity '${name}'`),
    retryOnExit: options.retryOnExit ?? null,
  };
}

function finished(name: string, answer: OkAnswer): string {
  const stdout = outputOf(answer).toString('utf8');
  const exitCode = answer.exitCode ?? 0;
  if (exitCode !== 0) throw new StepFailed(name, exitCode, stdout, answer.stderr);
  return stdout;
}

/** Runs a command as an activity (on any agent with `requires`) and waits for it; returns its stdout. */
export async function activity(name: string, argv: readonly string[], options: ActivityOptions = {}): Promise<string> {
  return finished(name, await ok(await send({ verb: 'activity.run', ...spec(name, argv, options) })));
}

/** Starts an activity without waiting for it; collect it later with activityCollect or activityWaitAll. */
export async function activitySubmit(name: string, argv: readonly string[], options: ActivityOptions = {}): Promise<void> {
  await ok(await send({ verb: 'activity.submit', ...spec(name, argv, options) }));
}

/** Waits for the submitted activity `name`; returns its stdout, or throws StepFailed when it failed. */
export async function activityCollect(name: string): Promise<string> {
  return finished(name, await ok(await send({ verb: 'activity.wait', name })));
}

/** Waits for every activity this run submitted; throws StepFailed when any of them failed. */
export async function activityWaitAll(): Promise<void> {
  await requireAgent('activity_wait_all', 'activity.wait');
  finished('*', await ok(await send({ verb: 'activity.wait', all: true })));
}
