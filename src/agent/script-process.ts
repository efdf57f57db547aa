import { spawn } from 'node:child_process';
import { reopenable, scriptLauncher, type LaunchedExit } from './launcher.js';
import { signalGroup } from './signal-group.js';

export type ScriptExit = LaunchedExit;

const live = new Set<ScriptProcess>();

/** Ends every script this process started (the runner itself is being interrupted). */
export function endAllScripts(): void {
  for (const script of live) script.end();
}

/** Grace a script (or an activity's command) gets after SIGTERM before its group is killed outright. */
export const KILL_GRACE_MS = 2000;

interface ScriptOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: 'inherit' | number;
  stderr: 'inherit' | number;
}

/**
 * The script as a process group of its own, so ending it ends every command it started (a step's
 * command, a pipeline, a background job) and nothing else. Started by the launcher where there is
 * one (launcher.ts), else forked from this process.
 */
export class ScriptProcess {
  private pid: number | undefined;
  /** end() was asked before the launcher said the script's pid. */
  private endAsked = false;
  readonly exited: Promise<ScriptExit>;

  constructor(command: string[], options: ScriptOptions) {
    live.add(this);
    const launcher = reopenable(options.stdout) && reopenable(options.stderr) ? scriptLauncher() : null;
    const exited = launcher
      ? launcher.launch(command, options, (pid) => this.started(pid))
      : this.fork(command, options);
    this.exited = exited.then((exit) => {
      live.delete(this);
      this.signalGroup('SIGKILL'); // stragglers the script left behind
      return exit;
    });
  }

  private fork(command: string[], options: ScriptOptions): Promise<ScriptExit> {
    const [program, ...args] = command;
    const child = spawn(program ?? 'false', args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', options.stdout, options.stderr],
      detached: true,
    });
    this.pid = child.pid;
    return new Promise((resolve) => {
      child.once('error', () => resolve({ code: 127, signal: null }));
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  private started(pid: number): void {
    this.pid = pid;
    if (this.endAsked) this.end();
  }

  /** SIGTERM to the group, SIGKILL if it is still there after the grace period. */
  end(): void {
    if (this.pid === undefined) {
      this.endAsked = true;
      return;
    }
    this.signalGroup('SIGTERM');
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), KILL_GRACE_MS);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  private signalGroup(signal: NodeJS.Signals): void {
    signalGroup(this.pid, signal);
  }
}
