import { spawn, type ChildProcess } from 'node:child_process';

export interface ScriptExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<ScriptProcess>();

/** Ends every script this process started (the runner itself is being interrupted). */
export function endAllScripts(): void {
  for (const script of live) script.end();
}

/** Grace a script (or an activity's command) gets after SIGTERM before its group is killed outright. */
export const KILL_GRACE_MS = 2000;

/**
 * The script as a process group of its own, so ending it ends every command it started (a step's
 * command, a pipeline, a background job) and nothing else.
 */
export class ScriptProcess {
  private readonly child: ChildProcess;
  readonly exited: Promise<ScriptExit>;

  constructor(
    command: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; stdout: 'inherit' | number; stderr: 'inherit' | number },
  ) {
    const [program, ...args] = command;
    this.child = spawn(program ?? 'false', args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', options.stdout, options.stderr],
      detached: true,
    });
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once('error', () => resolve({ code: 127, signal: null }));
      this.child.once('exit', (code, signal) => {
        live.delete(this);
        this.signalGroup('SIGKILL'); // stragglers the script left behind
        resolve({ code, signal });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** SIGTERM to the group, SIGKILL if it is still there after the grace period. */
  end(): void {
    this.signalGroup('SIGTERM');
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), KILL_GRACE_MS);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  private signalGroup(signal: NodeJS.Signals): void {
    signalGroup(this.child.pid, signal);
  }
}

/** Sends `signal` to the process group led by `pid` (a child spawned `detached`), if it is still there. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}
