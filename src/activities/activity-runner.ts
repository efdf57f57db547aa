import { spawn } from 'node:child_process';
import { KILL_GRACE_MS, signalGroup } from '../agent/script-process.js';
import type { ActivityRecord, ActivityResult } from '../store/types.js';

/**
 * Runs one attempt of an activity's command, capturing stdout; stderr goes where the host says.
 * Output past the recorded-result limit ends the attempt (exit 1, with a line saying why) rather
 * than growing in memory and then in the store. An abort (its run was cancelled) ends the command.
 */
export function runActivityAttempt(
  activity: ActivityRecord,
  stderr: 'inherit' | number,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<ActivityResult> {
  return new Promise((resolve) => {
    const [program, ...args] = activity.argv;
    // A process group of its own, as a script's: ending the attempt ends every command it started.
    const child = spawn(program ?? 'false', args, {
      cwd: activity.cwd ?? process.cwd(),
      stdio: ['ignore', 'pipe', stderr],
      env: { ...process.env, SPOOL_ACTIVITY_ID: activity.id, SPOOL_ATTEMPT: String(activity.attempt) },
      detached: true,
    });
    const cancel = (): void => {
      signalGroup(child.pid, 'SIGTERM');
      setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    if (signal?.aborted) cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    // What it left behind goes with it: a process holding its stdout would keep 'close' from coming.
    child.once('exit', () => signalGroup(child.pid, 'SIGKILL'));
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
      process.stderr.write(
        `spool: activity ${activity.name} printed over the ${maxBytes}-byte limit for a recorded result; ` +
          `write the output to a file and record its path or an id instead\n`,
      );
    });
    child.once('error', (error) => {
      signal?.removeEventListener('abort', cancel);
      process.stderr.write(`spool: activity ${activity.name}: ${error.message}\n`);
      resolve({ stdout: '', exitCode: 127, attempts: activity.attempt });
    });
    child.once('close', (code, ended) => {
      signal?.removeEventListener('abort', cancel);
      resolve({
        stdout: Buffer.concat(chunks).toString('utf8'),
        exitCode: overLimit ? 1 : (code ?? (ended ? 128 + 9 : 1)),
        attempts: activity.attempt,
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
