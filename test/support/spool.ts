import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';
import type { JournalEntry, RunRecord } from '../../src/store/types.js';

/**
 * Runs the real, built CLI (`node bin/spool ...`, which loads dist/: build first) as a child process
 * and inspects what it recorded by opening its embedded store afterwards.
 */
export const SPOOL_BIN = fileURLToPath(new URL('../../bin/spool', import.meta.url));

export interface SpoolResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr together, in the order they were written (both go to one file). */
  output: string;
}

export interface SpoolProcess {
  pid: number;
  /** What it has written so far. */
  output(): string;
  done: Promise<SpoolResult>;
}

export interface SpoolOptions {
  cwd: string;
  /** Run this executable with ARGS instead of `node bin/spool` (the native client, say). */
  program?: string;
  /** Added to (or, when undefined, removed from) the environment spool starts with. */
  env?: Record<string, string | undefined>;
}

const created: string[] = [];

/** A fresh directory (its real path, so it matches what processes report), removed by `removeTempDirs`. */
export function tempDir(prefix = 'spool-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

const started: number[] = [];

/**
 * For afterAll: ends what a failed or timed-out test left running (spool processes and their scripts),
 * then removes the file's temp dirs (a data dir is ~40 MB); SPOOL_TEST_KEEP=1 keeps the dirs.
 */
export function removeTempDirs(): void {
  for (const pid of started.splice(0)) {
    try {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of created) killScripts(dir);
  if (process.env.SPOOL_TEST_KEEP) return;
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

function environment(extra: SpoolOptions['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Never let a test's spool talk to an agent or a database it did not start.
  for (const name of ['SPOOL_SOCKET', 'SPOOL_DATABASE_URL', 'SPOOL_MAX_RESULT_BYTES', 'SPOOL_RUN_ID', 'SPOOL_LOG_ID'])
    delete env[name];
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts `node bin/spool ARGS` with stdout and stderr written to one file, so their order is kept. */
export function startSpool(args: string[], options: SpoolOptions): SpoolProcess {
  const logFile = join(tempDir('spool-output-'), 'output.log');
  const fd = openSync(logFile, 'w');
  const [program, argv] = options.program ? [options.program, args] : [process.execPath, [SPOOL_BIN, ...args]];
  const child = spawn(program, argv, {
    cwd: options.cwd,
    env: environment(options.env),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const output = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const done = new Promise<SpoolResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal, output: output() }));
  });
  if (child.pid === undefined) throw new Error(`could not start ${SPOOL_BIN}`);
  started.push(child.pid);
  return { pid: child.pid, output, done };
}

/** Runs `node bin/spool ARGS` to the end. */
export function spool(args: string[], options: SpoolOptions): Promise<SpoolResult> {
  return startSpool(args, options).done;
}

/** The run id from the `  run: <id>` line `spool run` prints first. */
export function runIdOf(output: string): string {
  const match = /^ {2}run: (\S+)/m.exec(output);
  if (!match?.[1]) throw new Error(`no '  run: <id>' line in:\n${output}`);
  return match[1];
}

/** Output lines, without the trailing empty one. */
export function linesOf(text: string): string[] {
  return text.split('\n').filter((line, i, all) => line !== '' || i < all.length - 1);
}

/** Writes files into dir: `{ 'x.sh': '...' }`. */
export function writeFiles(dir: string, files: Record<string, string | Uint8Array>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

export function readLines(file: string): string[] {
  return existsSync(file) ? linesOf(readFileSync(file, 'utf8')) : [];
}

/** Polls until `check` answers something truthy; fails after timeoutMs saying what it waited for. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 90_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Opens the data dir's store (no spool process may have it open), runs fn, closes it. */
export async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openPgliteStore(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export async function recorded(
  dataDir: string,
  runId: string,
): Promise<{ run: RunRecord | null; journal: JournalEntry[] }> {
  return withStore(dataDir, async (store) => ({
    run: await store.getRun(runId),
    journal: await store.readJournal(runId),
  }));
}

/** `verb name` of each call entry, in position order: the shape of what a run recorded. */
export function callsOf(journal: JournalEntry[]): string[] {
  return journal.filter((entry) => entry.kind === 'call').map((entry) => `${entry.verb} ${entry.name}`.trimEnd());
}

// ---- processes, through /proc ----

/** Whether a process exists (a zombie counts as gone: it runs nothing). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export function processGroupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/** Processes whose command line mentions `text` (for a script: its copy under .spool/scripts). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text) && isAlive(Number(name)))
        pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Where the runs started in cwd keep their script copies while a pass runs (a pipeline's jobs, a changed file). */
export const scriptCopies = (cwd: string): string => join(cwd, '.spool', 'scripts') + '/';

/**
 * Processes running a script of a run submitted from cwd: an interpreter given a script file
 * directly in cwd (a pass runs the file in place) or a copy under .spool/scripts.
 */
export function scriptProcesses(cwd: string): number[] {
  const isScript = (arg: string): boolean =>
    arg.startsWith(scriptCopies(cwd)) || (dirname(arg) === cwd && /\.(sh|bash|py|mjs|js|cjs)$/.test(arg));
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').some(isScript) && isAlive(Number(name)))
        pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** SIGKILL to the process groups of the scripts running from cwd (the script, its steps, their children). */
export function killScripts(cwd: string): number[] {
  const groups = new Set<number>();
  for (const pid of scriptProcesses(cwd)) groups.add(processGroupOf(pid) ?? pid);
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return [...groups];
}

/** Whether any process is still in the group. */
export function groupAlive(group: number): boolean {
  return readdirSync('/proc').some(
    (name) => /^\d+$/.test(name) && isAlive(Number(name)) && processGroupOf(Number(name)) === group,
  );
}
