import { fstatSync } from 'node:fs';
import { ScriptError } from './errors.js';
import type { Answer, ExecuteAnswer, OkAnswer } from './protocol.js';
import { suspend } from './suspend.js';

/** Whether fd writes into the run's log, which already holds what a replayed answer reports. */
function writesToRunLog(fd: number): boolean {
  const logId = process.env.SPOOL_LOG_ID;
  if (!logId) return false;
  try {
    const stat = fstatSync(fd);
    return `${stat.dev}:${stat.ino}` === logId;
  } catch {
    return false;
  }
}

function refuse(answer: Extract<Answer, { status: 'error' }>): never {
  throw new ScriptError(answer.kind, answer.message, answer.exitCode);
}

function unexpected(answer: Answer, wanted: string): never {
  throw new ScriptError('internal', `the agent answered '${String(answer.status)}' where ${wanted} was expected`);
}

/** The agent's note for the person reading the log (a timed-out wait, which activities failed). */
function relayStderr(answer: OkAnswer): void {
  if (answer.stderr && !(answer.replayed && writesToRunLog(2))) process.stderr.write(`${answer.stderr}\n`);
}

/**
 * An `ok` answer, or what the other answers mean: `error` throws a ScriptError, and `suspended`
 * never settles (suspend.ts), so code after the call runs only once it has returned.
 */
export async function ok(answer: Answer): Promise<OkAnswer> {
  switch (answer.status) {
    case 'ok':
      relayStderr(answer);
      return answer;
    case 'error':
      return refuse(answer);
    case 'suspended':
      return suspend(answer.message);
    default:
      return unexpected(answer, "'ok'");
  }
}

/** Like ok, for the calls the agent may instead ask to run now (a step, a step_fn). */
export async function okOrExecute(answer: Answer): Promise<OkAnswer | ExecuteAnswer> {
  return answer.status === 'execute' ? answer : ok(answer);
}

/** A text answer without the one newline the agent ends it with. */
export function text(answer: OkAnswer): string {
  const stdout = answer.stdout ?? '';
  return stdout.endsWith('\n') ? stdout.slice(0, -1) : stdout;
}

/** Text that parses as JSON is that value; other text is itself (docs/sdks.md, state values). */
export function jsonOrText(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
