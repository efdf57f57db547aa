import { fstatSync, readdirSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import type { PassOutput } from './start-pass.js';
import { tailFile } from '../common/file-tail.js';
import type { StoreOptions } from '../store/open.js';

/**
 * A pass writes stdout and stderr into one file (so their order is kept); this copies what it
 * writes into the store as it goes, where `spool logs` reads it.
 */
export function captureLog(store: Store, logsDir: string, run: RunRecord): PassOutput {
  const tail = tailFile(passLogPath(logsDir, run, 'log'), (bytes) => store.appendLog(run.id, run.passes, bytes));
  return { stdout: tail.fd, stderr: tail.fd, close: () => tail.close() };
}

/**
 * `spool run`'s passes: what a pass writes reaches this process's own stdout and stderr, as if the
 * script ran in the foreground, and the store too, so `spool logs` and the run page have the run's
 * log as they have one from `spool dev`. When stdout and stderr are the same place (a terminal, or
 * `2>&1`) one file keeps their order; otherwise each has its own, so `2>/dev/null` still parts them.
 */
export function teeLog(store: Store, logsDir: string, run: RunRecord): PassOutput {
  // One pass's pieces reach the store in the order they were read, one at a time.
  let storing: Promise<void> = Promise.resolve();
  const tee = (to: NodeJS.WriteStream) => (bytes: Buffer) => {
    to.write(bytes);
    storing = storing.then(() => store.appendLog(run.id, run.passes, bytes));
    return storing;
  };
  const stdout = tailFile(passLogPath(logsDir, run, 'stdout'), tee(process.stdout));
  if (sameFile(1, 2)) return { stdout: stdout.fd, stderr: stdout.fd, close: () => stdout.close() };
  const stderr = tailFile(passLogPath(logsDir, run, 'stderr'), tee(process.stderr));
  return {
    stdout: stdout.fd,
    stderr: stderr.fd,
    async close() {
      await Promise.all([stdout.close(), stderr.close()]);
    },
  };
}

/** Where passes' log files go: beside the embedded store, or in the temp dir for a PostgreSQL one. */
export function logsDirFor(options: StoreOptions): string {
  return join(options.databaseUrl && !options.dataDir ? tmpdir() : (options.dataDir ?? '.spool'), 'logs');
}

/** The name builds before the flat directory gave a run's directory: its id, `:` made `_`. */
const OLD_RUN_DIR = /^[A-Za-z0-9-]+_[A-Za-z0-9-]+_run-[a-z0-9]+$/;

/**
 * Removes the empty directory a run each that builds before the flat directory (passLogPath) left
 * there, once, as a server or `spool run` starts on it. Only those: on PostgreSQL with no data
 * dir the logs are in the temp dir's shared `logs`, where other programs' directories may be. One
 * that is not empty (a pass's file its process was killed before removing) is left alone.
 */
export function removeEmptyRunDirs(logsDir: string): void {
  let entries;
  try {
    entries = readdirSync(logsDir, { withFileTypes: true });
  } catch {
    return; // no logs directory yet
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || !OLD_RUN_DIR.test(entry.name)) continue;
    try {
      rmdirSync(join(logsDir, entry.name));
    } catch {
      // not empty, or gone meanwhile
    }
  }
}

/**
 * One flat directory of pass files, each removed once its text is in the store: a directory per
 * run cost a directory's creation each pass and was left behind, empty, by every run.
 */
function passLogPath(logsDir: string, run: RunRecord, name: string): string {
  return join(logsDir, `${run.id.replace(/[^a-z0-9-]/gi, '_')}.pass-${run.passes}.${name}`);
}

function sameFile(a: number, b: number): boolean {
  try {
    const [first, second] = [fstatSync(a), fstatSync(b)];
    return first.dev === second.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}
