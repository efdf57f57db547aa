import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { ok, okOrExecute } from './answers.js';
import { send } from './connection.js';
import { ScriptError, StepFailed } from './errors.js';
import { checkArgv } from './checks.js';
import { asJson } from './json.js';
import { outputField, outputOf } from './output.js';
import type { OkAnswer } from './protocol.js';

/** A step's recorded result, as the unchecked form returns it. */
export interface StepResult {
  /** stdout as text: what is not UTF-8 shows as U+FFFD, the same on every pass. */
  stdout: string;
  /** stdout byte for byte (a NUL, bytes that are not UTF-8), the same on every pass. */
  bytes: Uint8Array;
  exitCode: number;
}

function resultOf(bytes: Buffer, exitCode: number): StepResult {
  return { stdout: bytes.toString('utf8'), bytes, exitCode };
}

export interface StepOptions {
  /** false: a non-zero exit is returned as `{ stdout, exitCode }` instead of thrown as StepFailed. */
  check?: boolean;
}

/**
 * The command, without a shell, in this script's environment: stdout captured, stdin and stderr
 * shared. Its own variables as under the spool step verb: the idempotency key, and with tracing on
 * the step's span as TRACEPARENT, so a command that traces joins the run's trace (docs/tracing.md).
 */
function runCommand(argv: readonly string[], { idempotencyKey, traceparent }: { idempotencyKey?: string; traceparent?: string }): Promise<StepResult> {
  return new Promise((resolve) => {
    const [program = '', ...args] = argv;
    const env = {
      ...process.env,
      ...(idempotencyKey === undefined ? {} : { SPOOL_IDEMPOTENCY_KEY: idempotencyKey }),
      ...(traceparent ? { TRACEPARENT: traceparent } : {}),
    };
    const child = spawn(program, args, { stdio: ['inherit', 'pipe', 'inherit'], env });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('error', (error: NodeJS.ErrnoException) => {
      // Reported as a shell would, so a missing tool reads the same from every SDK and from bash.
      const notFound = error.code === 'ENOENT';
      process.stderr.write(`spool: cannot run '${program}': ${notFound ? 'command not found' : error.message}\n`);
      resolve(resultOf(Buffer.alloc(0), notFound ? 127 : 126));
    });
    child.once('close', (code, signal) => {
      const exitCode = code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1);
      resolve(resultOf(Buffer.concat(chunks), exitCode));
    });
  });
}

function recorded(answer: OkAnswer): StepResult {
  return resultOf(outputOf(answer), answer.exitCode ?? 0);
}

/**
 * A durable subprocess: runs `argv` (no shell) the first time the script reaches `name` and records
 * its stdout and exit code; every replay returns the recorded result without running it. Returns
 * stdout and throws StepFailed on a non-zero exit, or with `{ check: false }` returns both, with
 * stdout's exact bytes as `bytes` (output that is not text is recorded as bytes, docs/protocol.md).
 */
export function step(name: string, argv: readonly string[], options?: { check?: true }): Promise<string>;
export function step(name: string, argv: readonly string[], options: { check: false }): Promise<StepResult>;
export function step(name: string, argv: readonly string[], options?: StepOptions): Promise<string | StepResult>;
export async function step(name: string, argv: readonly string[], options: StepOptions = {}): Promise<string | StepResult> {
  checkArgv(argv, `step '${name}'`);
  const answer = await okOrExecute(await send({ verb: 'step', name }));
  let result: StepResult;
  if (answer.status === 'execute') {
    result = await runCommand(argv, answer);
    await ok(await send({ verb: 'done', position: answer.position, ...outputField(Buffer.from(result.bytes)), exitCode: result.exitCode }));
  } else {
    result = recorded(answer);
  }
  if (options.check === false) return result;
  if (result.exitCode !== 0) throw new StepFailed(name, result.exitCode, result.stdout);
  return result.stdout;
}

/**
 * A durable function: runs `fn` the first time the script reaches `name` and records its return
 * value; every replay returns the recorded value and does not call `fn`.
 *
 * The value is what JSON gives back, on the first pass as on every replay: `T` is what you promise
 * it looks like after `JSON.parse(JSON.stringify(value))`. A Date comes back as its ISO string, a
 * class instance as a plain object, undefined as null; a bigint, a function, a Map, a Set, NaN or a
 * cycle is refused with a ScriptError and nothing is recorded.
 *
 * If `fn` throws (or rejects), nothing is recorded and its own error reaches the caller; the next
 * pass runs it again. Keep `fn` safe to retry: a crash between it and its record runs it again.
 */
export async function stepFn<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  if (typeof fn !== 'function') throw new ScriptError('usage', `step_fn '${name}': the second argument must be a function`);
  const answer = await okOrExecute(await send({ verb: 'step_fn', name }));
  if (answer.status !== 'execute') return (answer.value ?? null) as T;
  const value = asJson(await fn(), `step_fn '${name}'`);
  await ok(await send({ verb: 'done', position: answer.position, value }));
  return value as T;
}

/**
 * Takes the run's durable, project-scoped lease on `group`, then runs `body`. The lease belongs to
 * the run: it stays held after `body` returns and passes to the next waiter when the run ends, so a
 * second lock in one run is refused (ScriptError). While another run holds it, this run waits
 * holding no process.
 */
export async function lock<T>(group: string, body: () => T | Promise<T>): Promise<T> {
  await ok(await send({ verb: 'lock', group, command: false }));
  return body();
}
