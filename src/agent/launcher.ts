import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, fstatSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { nativeClientBinary } from './script-client.js';

/**
 * Scripts started by the native client's `spool launcher` (sdk/go/cmd/spool/launcher.go) rather
 * than by this process: Node forks itself for every child, copying the page tables of a server of
 * ~120 MiB and leaving it pages to fault back in (17% of `spool dev`'s CPU under load,
 * docs/benchmarks.md), where Go's clone copies nothing. Linux only (the launcher opens this
 * process's outputs through /proc), and only where the native client is; SPOOL_LAUNCHER=0 turns it
 * off. Should the launcher go, the scripts it had are ended and their passes lost (they replay).
 */

export interface LaunchedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why the script was ended by no doing of its own (its launcher went): its pass is lost, and replays. */
  lost?: string;
}

export interface LaunchOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: 'inherit' | number;
  stderr: 'inherit' | number;
}

interface Launched {
  started(pid: number): void;
  exited(exit: LaunchedExit): void;
}

interface Answer {
  id: number;
  pid?: number;
  exited?: boolean;
  code?: number;
  signal?: NodeJS.Signals;
  error?: string;
}

class Launcher {
  private readonly child: ChildProcess;
  private readonly input: Socket;
  private readonly answers: Socket;
  private readonly launched = new Map<number, Launched>();
  private nextId = 1;
  gone = false;
  /** It started a script once: one that goes after that may be replaced, one that never did may not. */
  served = false;

  constructor(binary: string) {
    this.child = spawn(binary, ['launcher'], { env: { ...process.env, SPOOL_LAUNCHER: '1' }, stdio: ['pipe', 'inherit', 'inherit', 'pipe'] });
    this.input = this.child.stdin as Socket;
    this.answers = this.child.stdio[3] as Socket;
    createInterface({ input: this.answers }).on('line', (line) => this.answer(line));
    this.child.once('error', () => this.fail());
    // Not 'exit': 'close' comes once its answers are read too, an exit it reported before it went among them.
    this.child.once('close', () => this.fail());
    this.input.on('error', () => this.fail());
    this.child.unref();
    this.idle();
  }

  /** Starts a script as a process group of its own; `started` is told its pid. */
  launch(command: string[], options: LaunchOptions, started: (pid: number) => void): Promise<LaunchedExit> {
    const id = this.nextId++;
    const exited = new Promise<LaunchedExit>((exited) => this.launched.set(id, { started, exited }));
    this.answers.ref();
    const request = {
      id,
      argv: command,
      dir: options.cwd,
      env: Object.entries(options.env).flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`])),
      stdout: outputPath(options.stdout),
      stderr: outputPath(options.stderr),
    };
    this.input.write(`${JSON.stringify(request)}\n`);
    return exited;
  }

  private answer(line: string): void {
    let answer: Answer;
    try {
      answer = JSON.parse(line) as Answer;
    } catch {
      process.stderr.write(`spool: the launcher said what is not an answer: ${line.slice(0, 200)}\n`);
      return;
    }
    const launched = this.launched.get(answer.id);
    if (!launched) return;
    if (answer.error !== undefined) {
      process.stderr.write(`spool: the launcher could not start a script: ${answer.error}\n`);
      this.settle(answer.id, { code: 127, signal: null });
    } else if (answer.exited) {
      this.settle(answer.id, { code: answer.code ?? null, signal: answer.signal ?? null });
    } else if (answer.pid) {
      this.served = true;
      launched.started(answer.pid);
    }
  }

  private settle(id: number, exit: LaunchedExit): void {
    this.launched.get(id)?.exited(exit);
    this.launched.delete(id);
    this.idle();
  }

  /** Nothing launched: the launcher does not keep this process alive. */
  private idle(): void {
    if (this.launched.size > 0) return;
    this.answers.unref();
    this.input.unref();
  }

  /**
   * The launcher went: nothing would tell its scripts' exits now, so they are said killed and their
   * passes lost; ScriptProcess kills each one's group once told (the stragglers' SIGKILL).
   */
  private fail(): void {
    if (this.gone) return;
    this.gone = true;
    for (const id of this.launched.keys()) {
      this.settle(id, { code: null, signal: 'SIGKILL', lost: 'the launcher that started the script ended; the run replays' });
    }
  }
}

/** Where the launcher opens an output of this process's: the same file, through /proc. */
function outputPath(output: 'inherit' | number): string {
  return output === 'inherit' ? '' : `/proc/${process.pid}/fd/${output}`;
}

/** Whether the launcher can open that output again: a socket (Node's pipes to a child are) it cannot. */
export function reopenable(output: 'inherit' | number): boolean {
  if (output === 'inherit') return true;
  try {
    const stat = fstatSync(output);
    return stat.isFile() || stat.isFIFO() || stat.isCharacterDevice();
  } catch {
    return false;
  }
}

let launcher: Launcher | null | undefined;

/**
 * This process's launcher, started on first use and again after one that served went (killed,
 * say); null where there is none to be had, or the last one went without starting anything.
 */
export function scriptLauncher(): Launcher | null {
  if (launcher?.gone) launcher = launcher.served ? undefined : null;
  if (launcher !== undefined) return launcher;
  const binary = process.platform === 'linux' && process.env.SPOOL_LAUNCHER !== '0' ? nativeClientBinary() : null;
  launcher = binary && existsSync(binary) ? new Launcher(binary) : null;
  return launcher;
}
