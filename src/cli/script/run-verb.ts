import { spawn } from 'node:child_process';
import { fstatSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { exitCodeOf } from '../../common/errors.js';
import { oneLine } from '../../common/one-line.js';
import { bytesField } from '../../common/output-bytes.js';
import { StderrTail, tailOf } from '../../common/stderr-tail.js';
import type { Answer, ArtifactPart } from '../../engine/protocol.js';
import { EXIT } from '../../engine/protocol.js';
import { extractCheckout, receiveArtifact, sendArtifact, sourceSize, type TransferEnd } from './artifact-transfer.js';
import { AgentClient, AgentUnavailable } from './client.js';
import { parseScriptCall } from './parse.js';

/** Whether fd writes into the run's log, where a replayed result was already printed on its first pass. */
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

/**
 * Runs the command in the script's own environment: stdout captured as the step's result and
 * printed as it comes (a long step shows its progress in spool logs and kubectl logs while it
 * runs, and a step that is cancelled or killed half-way leaves what it printed); stderr straight
 * through.
 */
type CommandResult = ({ stdout: string } | { stdoutBase64: string }) & { exitCode: number; stderrTail?: string };

/** How long a command's stderr is read after the command ended (sdk/go/cmd/spool/command.go's stderrGrace). */
const STDERR_GRACE_MS = 250;

/** The step's own variables: its idempotency key, and with tracing on its span (TRACEPARENT, docs/tracing.md). */
function runCommand(command: string[], answer: { idempotencyKey?: string; traceparent?: string }): Promise<CommandResult> {
  return new Promise((resolve) => {
    const [program, ...args] = command;
    const env = {
      ...process.env,
      ...(answer.idempotencyKey ? { SPOOL_IDEMPOTENCY_KEY: answer.idempotencyKey } : {}),
      ...(answer.traceparent ? { TRACEPARENT: answer.traceparent } : {}),
    };
    const cannotRun = (error: NodeJS.ErrnoException): void => {
      // A name too long to look up is not found, as bash and the native client have it.
      const notFound = error.code === 'ENOENT' || error.code === 'ENAMETOOLONG';
      const message = `spool: cannot run '${program ?? ''}': ${notFound ? 'command not found' : error.message}`;
      process.stderr.write(`${message}\n`);
      resolve({ stdout: '', exitCode: notFound ? 127 : 126, stderrTail: tailOf(message) });
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(program ?? 'false', args, { stdio: ['inherit', 'pipe', 'pipe'], env });
    } catch (error) {
      // Some failures are thrown, not emitted: a program name over the system's limit (ENAMETOOLONG).
      cannotRun(error as NodeJS.ErrnoException);
      return;
    }
    const chunks: Buffer[] = [];
    const stderr = new StderrTail();
    child.stdout?.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      process.stdout.write(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr.add(chunk);
      process.stderr.write(chunk);
    });
    child.once('error', cannotRun);
    // Done once the command has exited and its stdout is closed (as before: stdout is the result),
    // and its stderr has closed too or STDERR_GRACE_MS have passed: a process the command left in
    // the background may hold stderr open for good, and the step must not wait for it.
    const exited = new Promise<number>((settle) =>
      child.once('exit', (code, signal) => settle(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1))),
    );
    const closed = (stream: Readable | null): Promise<void> => new Promise((settle) => (stream ? stream.once('close', () => settle()) : settle()));
    // Listened for from the start: stderr may close before stdout does, and a 'close' missed would
    // cost every step the whole grace.
    const stderrClosed = closed(child.stderr);
    void Promise.all([exited, closed(child.stdout)]).then(async ([exitCode]) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stderrClosed, new Promise((settle) => (timer = setTimeout(settle, STDERR_GRACE_MS)))]);
      clearTimeout(timer);
      (child.stderr as { unref?: () => void } | null)?.unref?.();
      // Bytes as printed: what is not plain text goes as base64, so a replay gives back the same bytes.
      resolve({ ...bytesField('stdout', Buffer.concat(chunks)), exitCode, ...(exitCode !== 0 ? stderr.field() : {}) });
    });
  });
}

/** Prints a call's answer; `executed` when the step's command ran here and printed its stdout already. */
function finish(answer: Answer, executed = false): number {
  switch (answer.status) {
    case 'ok': {
      const stdout = executed ? '' : answer.stdoutBase64 !== undefined ? Buffer.from(answer.stdoutBase64, 'base64') : (answer.stdout ?? '');
      if (stdout.length && !(answer.replayed && writesToRunLog(1))) process.stdout.write(stdout);
      if (answer.stderr && !(answer.replayed && writesToRunLog(2))) process.stderr.write(`${answer.stderr}\n`);
      return answer.exitCode ?? EXIT.ok;
    }
    case 'error':
      process.stderr.write(`${answer.message}\n`);
      return answer.exitCode;
    default:
      process.stderr.write(`spool: unexpected answer from the agent: ${answer.status}\n`);
      return EXIT.failure;
  }
}

/**
 * The agent is ending this script's process group; going on would run code past a wait that has
 * not returned. Block until the signal lands (and bail out if it somehow never does).
 */
function awaitSuspension(): Promise<number> {
  return new Promise((resolve) => setTimeout(() => resolve(75), 60_000));
}

export async function runScriptVerb(args: string[]): Promise<number> {
  let call;
  try {
    call = parseScriptCall(args);
  } catch (error) {
    // The message may quote an argument, which may hold a line break: still one line.
    process.stderr.write(`${oneLine((error as Error).message)}\n`);
    return exitCodeOf(error);
  }
  const socketPath = process.env.SPOOL_SOCKET;
  if (!socketPath) {
    process.stderr.write(
      `spool ${args[0] ?? ''}: no agent to talk to (SPOOL_SOCKET is not set); in-script verbs run inside a script ` +
        `started by 'spool run', 'spool submit' or a cluster run\n`,
    );
    return EXIT.unavailable;
  }
  // A put's file is looked at (its size, or why it cannot be read) but not opened: a replayed put
  // needs no file, and a new one the agent refuses with that reason, taking no position.
  if (call.artifact && 'source' in call.artifact && call.request.verb === 'artifact.put') {
    const known = sourceSize(call.artifact.source);
    if ('problem' in known) call.request.unreadable = `spool artifact put: ${known.problem}`;
    else if (known.size !== undefined) call.request.size = known.size;
  }
  let client: AgentClient | null = null;
  try {
    client = await AgentClient.connect(socketPath);
    let answer = await client.request(call.request);
    if (call.artifact) {
      let end: TransferEnd | null = null;
      if (answer.status === 'execute' && 'source' in call.artifact) end = await sendArtifact(client, answer.position, call.artifact.source);
      if (answer.status === 'ok' && 'dest' in call.artifact && call.request.verb === 'artifact.get')
        end = await receiveArtifact(client, call.request, answer.value as ArtifactPart, call.artifact.dest);
      if (answer.status === 'ok' && 'extract' in call.artifact && call.request.verb === 'artifact.get')
        end = await extractCheckout(client, call.request, answer.value as ArtifactPart, call.artifact.extract);
      if (end && 'message' in end) {
        process.stderr.write(`${end.message}\n`);
        return end.exitCode;
      }
      if (end) answer = end.answer;
    }
    if (answer.status === 'suspended') return await awaitSuspension();
    if (answer.status === 'execute' && call.command) {
      const result = await runCommand(call.command, answer);
      answer = await client.request({ verb: 'done', position: answer.position, ...result });
      if (answer.status === 'ok') return finish(answer, true);
    }
    if (answer.status === 'suspended') return await awaitSuspension();
    return finish(answer);
  } catch (error) {
    if (error instanceof AgentUnavailable) {
      process.stderr.write(`spool: ${error.message}\n`);
      return exitCodeOf(error);
    }
    throw error;
  } finally {
    client?.close();
  }
}
