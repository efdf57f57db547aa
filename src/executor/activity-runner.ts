import { spawn } from 'node:child_process';
import type { ActivityRecord, ActivityResult } from '../store/types.js';

/** Runs one attempt of an activity's command, capturing stdout; stderr goes where the host says. */
export function runActivityAttempt(activity: ActivityRecord, stderr: 'inherit' | number): Promise<ActivityResult> {
  return new Promise((resolve) => {
    const [program, ...args] = activity.argv;
    const child = spawn(program ?? 'false', args, {
      cwd: activity.cwd ?? process.cwd(),
      stdio: ['ignore', 'pipe', stderr],
      env: { ...process.env, SPOOL_ACTIVITY_ID: activity.id, SPOOL_ATTEMPT: String(activity.attempt) },
    });
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('error', (error) => {
      process.stderr.write(`spool: activity ${activity.name}: ${error.message}\n`);
      resolve({ stdout: '', exitCode: 127, attempts: activity.attempt });
    });
    child.once('close', (code, signal) =>
      resolve({
        stdout: Buffer.concat(chunks).toString('utf8'),
        exitCode: code ?? (signal ? 128 + 9 : 1),
        attempts: activity.attempt,
      }),
    );
  });
}

/** When the next attempt runs, or null when this result is final: backoff doubles after each failure. */
export function nextAttemptAt(activity: ActivityRecord, result: ActivityResult, now: Date): Date | null {
  if (result.exitCode === 0 || activity.attempt >= activity.maxAttempts) return null;
  if (activity.retryOnExit && !activity.retryOnExit.includes(result.exitCode)) return null;
  return new Date(now.getTime() + activity.backoffMs * 2 ** (activity.attempt - 1));
}
