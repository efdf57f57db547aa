import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { inputDocument } from '../engine/input.js';
import { Pass, type PassHost } from '../engine/pass.js';
import { scriptOutcome } from '../engine/settle.js';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import { NODE_CLI, NODE_CLIENT_DIR, scriptClient } from '../agent/script-client.js';
import { scriptEnv } from '../agent/script-env.js';
import { sdkEnvironment } from '../agent/sdks/sdk-environment.js';
import { AgentSocket } from '../agent/socket-server.js';
import { ScriptProcess } from '../agent/script-process.js';

export type PassOutcome = ReturnType<typeof scriptOutcome>;

/** Where a script's stdout and stderr go: this process's own, or open files (often one file for both). */
export interface ScriptOutput {
  stdout: 'inherit' | number;
  stderr: 'inherit' | number;
}

export interface PassOptions {
  output: ScriptOutput;
  lenient?: boolean;
  /** Variables added to the script's environment. */
  env?: Record<string, string>;
  /** Aborting ends the script (its run was cancelled). */
  signal?: AbortSignal;
  /**
   * Run the pass in a new, empty working directory, removed when it ends, as each pass on a cluster
   * is a new pod: a script that leans on a file an earlier pass left fails here as it would there.
   */
  freshDir?: boolean;
  /** The pass to serve the script with, when the caller made its own (a replay's: engine/replay-pass.ts). */
  pass?: Pass;
}

/**
 * The file a pass runs: the script where it was submitted from, while that file still holds what
 * the run recorded, so `./lib.mjs` imports, the `node_modules` beside it and Python's own directory
 * resolve as the person expects. Once the file has changed (or is gone, or the run is a pipeline's
 * job), the recorded copy runs from `.spool/scripts/`: a replay must run the script the run started.
 */
function scriptToRun(
  run: RunRecord,
  cwd: string,
  say: (line: string) => void,
): { scriptPath: string; copyDir: string | null } {
  const original = resolve(cwd, run.workflow);
  if (holds(original, run.script)) return { scriptPath: original, copyDir: null };
  if (existsSync(original))
    say(`spool: ${run.workflow} changed since this run started; this pass runs the script the run recorded\n`);
  const copyDir = join(cwd, '.spool', 'scripts', run.id.replace(/[^a-z0-9-]/gi, '_'));
  mkdirSync(copyDir, { recursive: true });
  const scriptPath = join(copyDir, basename(run.workflow));
  writeFileSync(scriptPath, run.script);
  return { scriptPath, copyDir };
}

function holds(file: string, text: string): boolean {
  try {
    return statSync(file).isFile() && readFileSync(file).equals(Buffer.from(text));
  } catch {
    return false;
  }
}

let filesDir: string | null = null;
let passCount = 0;

/**
 * One private directory for every pass this process runs (each pass's socket and input file in
 * it), removed when the process exits: a directory per pass cost a directory's creation and
 * removal each time, the dearest of a pass's file operations.
 */
function passFilesDir(): string {
  if (filesDir) return filesDir;
  const dir = mkdtempSync(join(tmpdir(), 'spool-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  filesDir = dir;
  return dir;
}

/**
 * Runs one pass: the run's recorded script (scriptToRun), started from the top in the directory it
 * was submitted from, served by a fresh agent socket, until it exits or the agent ends it.
 */
export async function runPass(
  store: Store,
  run: RunRecord,
  host: PassHost,
  options: PassOptions,
): Promise<PassOutcome> {
  const client = scriptClient();
  const pass = options.pass ?? (await Pass.start(store, run, host, options.lenient));
  const freshDir = options.freshDir ? mkdtempSync(join(tmpdir(), 'spool-pass-')) : null;
  const cwd = freshDir ?? run.cwd ?? process.cwd();
  const passFiles = join(passFilesDir(), String(++passCount));
  const socketPath = `${passFiles}.sock`;
  // Said in the pass's own output, so it is in the run's log where the person reads the pass.
  const say = (line: string): void =>
    void (options.output.stderr === 'inherit' ? process.stderr.write(line) : writeSync(options.output.stderr, line));
  const { scriptPath, copyDir } = scriptToRun(run, cwd, say);
  const inputPath = `${passFiles}.input.json`;
  writeFileSync(inputPath, JSON.stringify(inputDocument(run)));

  let script: ScriptProcess | null = null;
  const agent = new AgentSocket(pass, () => script?.end());
  await agent.listen(socketPath);
  const origin = dirname(resolve(cwd, run.workflow));
  const base = {
    ...process.env,
    ...options.env,
    PYTHONPATH: [origin, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
  };
  const env: NodeJS.ProcessEnv = {
    ...base,
    ...sdkEnvironment(base),
    // The native client first where there is one; bin/ after it, so `spool` there is this package's
    // own CLI either way, and the native client hands control verbs to it (SPOOL_CONTROL_CLI).
    PATH: [...new Set([client.dir, NODE_CLIENT_DIR])].join(delimiter) + delimiter + (process.env.PATH ?? ''),
    SPOOL_CONTROL_CLI: NODE_CLI,
    ...scriptEnv({ socket: socketPath, runId: run.id, pass: run.passes, inputFile: inputPath, output: options.output.stdout }),
  };
  try {
    script = new ScriptProcess([...run.interpreter.split(' '), scriptPath], {
      cwd,
      env,
      stdout: options.output.stdout,
      stderr: options.output.stderr,
    });
    const stop = (): void => {
      pass.stopping = true;
      script?.end();
    };
    options.signal?.addEventListener('abort', stop);
    if (options.signal?.aborted) stop();
    const exit = await script.exited;
    options.signal?.removeEventListener('abort', stop);
    if (exit.lost) pass.lost ??= exit.lost;
    return scriptOutcome(pass, exit);
  } finally {
    pass.end();
    await agent.close();
    rmSync(socketPath, { force: true });
    rmSync(inputPath, { force: true });
    if (copyDir) rmSync(copyDir, { recursive: true, force: true });
    if (freshDir) rmSync(freshDir, { recursive: true, force: true });
  }
}
