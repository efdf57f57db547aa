import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
import { KILL_GRACE_MS } from '../agent/script-process.js';
import { signalGroup } from '../agent/signal-group.js';
import { bytesField } from '../common/output-bytes.js';
import { StderrTail } from '../common/stderr-tail.js';
import type { ActivityRecord, ActivityResult } from '../store/types.js';

/**
 * Runs one attempt of an activity's command, capturing stdout; stderr goes where the host says as
 * it comes, its tail kept for a failed attempt's result (with spool's own line when it was spool
 * that ended it). Output past the recorded-result limit ends the attempt (exit 1, with a line
 * saying why) rather than growing in memory and then in the store. An abort (its run was
 * cancelled) ends the command.
 */
export function runActivityAttempt(
  activity: ActivityRecord,
  stderr: 'inherit' | number,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<ActivityResult> {
  return new Promise((resolve) => {
    const [program, ...args] = activity.argv;
    const tail = new StderrTail();
    /** What the command (or spool, about it) says on stderr: passed on where the host says, and kept. */
    const say = (chunk: Buffer): void => {
      tail.add(chunk);
      if (stderr === 'inherit') process.stderr.write(chunk);
      else writeSync(stderr, chunk);
    };
    /** The command never started: emitted as 'error' (not found), or thrown (a name over the system's limit). */
    const failedToStart = (error: Error): void => {
      say(Buffer.from(`spool: activity ${activity.name}: ${error.message}\n`));
      resolve({ stdout: '', exitCode: 127, attempts: activity.attempt, ...tail.field() });
    };
    let child: ReturnType<typeof spawn>;
    try {
      // A process group of its own, as a script's: ending the attempt ends every command it started.
      child = spawn(program ?? 'false', args, {
        cwd: activity.cwd ?? process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SPOOL_ACTIVITY_ID: activity.id, SPOOL_ATTEMPT: String(activity.attempt) },
        detached: true,
      });
    } catch (error) {
      failedToStart(error as Error);
      return;
    }
    const cancel = (): void => {
      signalGroup(child.pid, 'SIGTERM');
      setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    if (signal?.aborted) cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    // What it left behind goes with it: a process holding its stdout would keep 'close' from coming.
    child.once('exit', () => signalGroup(child.pid, 'SIGKILL'));
    child.stderr?.on('data', say);
    const chunks: Buffer[] = [];
    let size = 0;
    let overLimit = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (overLimit) return;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      overLimit = true;
      chunks.length = 0;
      signalGroup(child.pid, 'SIGKILL');
      say(
        Buffer.from(
          `spool: activity ${activity.name} printed over the ${maxBytes}-byte limit for a recorded result; ` +
            `write the output to a file and record its path or an id instead\n`,
        ),
      );
    });
    child.once('error', (error) => {
      signal?.removeEventListener('abort', cancel);
      failedToStart(error);
    });
    child.once('close', (code, ended) => {
      signal?.removeEventListener('abort', cancel);
      const exitCode = overLimit ? 1 : (code ?? (ended ? 128 + 9 : 1));
      resolve({
        ...bytesField('stdout', Buffer.concat(chunks)),
        exitCode,
        attempts: activity.attempt,
        ...(exitCode !== 0 ? tail.field() : {}),
      });
    });
  });
}

/** When the next attempt runs, or null when this result is final: backoff doubles after each failure. */
export function nextAttemptAt(activity: ActivityRecord, result: ActivityResult, now: Date): Date | null {
  if (result.exitCode === 0 || activity.attempt >= activity.maxAttempts) return null;
  if (activity.retryOnExit && !activity.retryOnExit.includes(result.exitCode)) return null;
  return new Date(now.getTime() + activity.backoffMs * 2 ** (activity.attempt - 1));
}
