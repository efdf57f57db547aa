import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runActivityAttempt } from '../../src/activities/activity-runner.js';
import type { ActivityRecord } from '../../src/store/types.js';

/** An activity's command as the executor runs it: its whole process group is its own. */
describe('an activity attempt', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const activity = (script: string): ActivityRecord => ({
    id: 'a-1',
    runId: 'run-1',
    name: 'work',
    argv: ['sh', '-c', script],
    cwd: dir,
    requires: [],
    maxAttempts: 1,
    backoffMs: 0,
    retryOnExit: null,
    attempt: 1,
    status: 'running',
    nextAttemptAt: new Date(),
    result: null,
  });

  /** Whether a process of this pid is still there. */
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('given its run cancelled while a command it started runs (holding its output open), then the attempt ends at once and so does that command', async () => {
    dir = mkdtempSync(join(tmpdir(), 'activity-'));
    const abort = new AbortController();
    // The command's child holds stdout: ending only the command would leave the attempt waiting for it.
    const attempt = runActivityAttempt(activity('sleep 300 & echo $! > child.pid; wait'), 'inherit', 1024, abort.signal);
    const pidFile = join(dir, 'child.pid');
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const child = Number(readFileSync(pidFile, 'utf8'));
    abort.abort();
    const result = await Promise.race([attempt, new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))]);
    expect(result).toMatchObject({ stdout: '' });
    for (let i = 0; i < 40 && alive(child); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(child)).toBe(false);
  });

  it('given a command that fails writing to stderr, then its stderr reaches where the host says as it was written, and the result keeps its tail as text', async () => {
    dir = mkdtempSync(join(tmpdir(), 'activity-'));
    const log = openSync(join(dir, 'stderr.log'), 'w');
    try {
      const failed = await runActivityAttempt(activity('echo partial; printf "raw \\000 \\377\\nupstream said 503\\n" >&2; exit 3'), log, 1024);
      expect(failed).toEqual({ stdout: 'partial\n', exitCode: 3, attempts: 1, stderrTail: 'raw \uFFFD \uFFFD\nupstream said 503' });
      // A success keeps none, whatever it said.
      expect(await runActivityAttempt(activity('echo fine >&2'), log, 1024)).toEqual({ stdout: '', exitCode: 0, attempts: 1 });
    } finally {
      closeSync(log);
    }
    expect(readFileSync(join(dir, 'stderr.log'))).toEqual(Buffer.from('raw \0 \xff\nupstream said 503\nfine\n', 'latin1'));
  });

  it('given a command that leaves a process behind holding its output, then the attempt ends with the command, with what it printed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'activity-'));
    const attempt = runActivityAttempt(activity('sleep 300 & echo done'), 'inherit', 1024);
    const result = await Promise.race([attempt, new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))]);
    expect(result).toEqual({ stdout: 'done\n', exitCode: 0, attempts: 1 });
  });
});
