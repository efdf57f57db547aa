import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import type { JournalEntry, Run } from '../../src/api/responses.js';
import { SPOOL_BIN, removeTempDirs, spool, tempDir, waitFor, type SpoolResult } from './spool.js';

/**
 * Helpers for tests against `spool dev`: an in-process server (or a child `spool dev` process that
 * a test may kill -9), the real CLI pointed at it, and polling the HTTP API.
 */

/** How often the API is polled: the in-process server shares this process, so polling less leaves it more time. */
const POLL_MS = 100;

/** Like waitFor, polling every POLL_MS. */
export async function poll<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** A run and a journal entry as the API answers them (src/api/responses.ts). */
export type RunView = Run;
export type JournalView = JournalEntry;

export const TERMINAL = ['succeeded', 'failed', 'cancelled'];

/** A dev server in this process, on a free port, over a fresh data dir. */
export async function startDev(
  dataDir = join(tempDir('spool-dev-data-'), 'data'),
): Promise<DevServer & { dataDir: string }> {
  const server = await startDevServer({ port: 0, dataDir, pollMs: 50 });
  return { ...server, dataDir };
}

/**
 * A dev server for the test file that calls this (at its top level): started before its tests,
 * closed after them, with the file's temp dirs removed.
 */
export function useDevServer(): { readonly url: string } {
  let dev: DevServer | undefined;
  beforeAll(async () => {
    dev = await startDev();
  }, 60_000);
  afterAll(async () => {
    await dev?.close();
    removeTempDirs();
  });
  return {
    get url(): string {
      if (!dev) throw new Error('the dev server is not up yet: use it inside a test');
      return dev.url;
    },
  };
}

/** The real CLI (`node bin/spool ARGS`) in cwd, talking to the server at url. */
export function cli(url: string, cwd: string, args: string[]): Promise<SpoolResult> {
  return spool(args, { cwd, env: { SPOOL_SERVER: url } });
}

/** Like cli, but fails the test unless it exits 0; answers its output. */
export async function cliOk(url: string, cwd: string, args: string[]): Promise<string> {
  const result = await cli(url, cwd, args);
  if (result.code !== 0) throw new Error(`spool ${args.join(' ')} exited ${String(result.code)}:\n${result.output}`);
  return result.output;
}

/** The run id `spool submit FILE` printed (its only line). */
export async function submit(url: string, cwd: string, file: string, ...extra: string[]): Promise<string> {
  const output = await cliOk(url, cwd, ['submit', file, ...extra]);
  const id = output.trim();
  if (!/^dev:[^:]+:run-[a-z0-9]{16}$/.test(id)) throw new Error(`spool submit printed no run id:\n${output}`);
  return id;
}

export async function get<T>(url: string, path: string): Promise<T> {
  const response = await fetch(`${url}/v1${path}`);
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const runPath = (id: string): string => `/runs/${encodeURIComponent(id)}`;

export async function getRun(url: string, id: string): Promise<RunView> {
  return (await get<{ run: RunView }>(url, runPath(id))).run;
}

export async function listRuns(url: string): Promise<RunView[]> {
  return (await get<{ runs: RunView[] }>(url, '/runs?limit=1000')).runs;
}

/** A run's whole log so far, every pass, in order. */
export async function logOf(url: string, id: string): Promise<string> {
  const { logs } = await get<{ logs: { text: string }[] }>(url, `${runPath(id)}/logs`);
  return logs.map((line) => line.text).join('');
}

export async function journalOf(url: string, id: string): Promise<JournalView[]> {
  return (await get<{ journal: JournalView[] }>(url, `${runPath(id)}/journal`)).journal;
}

/**
 * Polls until the run is in one of the statuses (default: any terminal one); answers it. A run that
 * ends in another status fails at once, saying how it ended and what its log says.
 */
export async function waitForRun(url: string, id: string, statuses = TERMINAL, timeoutMs = 30_000): Promise<RunView> {
  return poll(
    `run ${id} to be ${statuses.join('|')}`,
    async () => {
      const run = await getRun(url, id);
      if (statuses.includes(run.status)) return run;
      if (TERMINAL.includes(run.status)) {
        throw new Error(
          `run ${id} ended ${run.status} (${run.error ?? ''}) while waiting for ${statuses.join('|')}; its log:\n${await logOf(url, id)}`,
        );
      }
      return null;
    },
    timeoutMs,
  );
}

/** Polls until the run's log contains text; answers the log. */
export async function waitForLog(url: string, id: string, text: string, timeoutMs = 30_000): Promise<string> {
  return poll(
    `the log of ${id} to contain ${JSON.stringify(text)}`,
    async () => {
      const log = await logOf(url, id);
      return log.includes(text) ? log : null;
    },
    timeoutMs,
  );
}

/** The log of a run once it has ended. */
export async function finalLog(url: string, id: string, timeoutMs = 30_000): Promise<string> {
  // A pass's log is copied into the store before its outcome is settled, so a run that has ended
  // has all of its log there.
  await waitForRun(url, id, TERMINAL, timeoutMs);
  return logOf(url, id);
}

// ---- a `spool dev` child process (for tests that kill it) ----

export interface DevProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  output(): string;
  exited: Promise<void>;
}

/** Starts `node bin/spool dev --port PORT --data-dir DIR [EXTRA...]` and waits for its listening line. */
export async function startDevProcess(dataDir: string, port: number, timeoutMs = 60_000, extra: string[] = []): Promise<DevProcess> {
  const logFile = join(tempDir('spool-dev-output-'), 'dev.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [SPOOL_BIN, 'dev', '--port', String(port), '--data-dir', dataDir, ...extra], {
    cwd: tempDir('spool-dev-cwd-'),
    env: Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) =>
          !['SPOOL_SOCKET', 'SPOOL_DATABASE_URL', 'SPOOL_RUN_ID', 'SPOOL_LOG_ID', 'SPOOL_SERVER'].includes(name),
      ),
    ),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error('could not start spool dev');
  const output = (): string => readFileSync(logFile, 'utf8');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    `spool dev to listen on ${url}`,
    () => {
      if (gone) throw new Error(`spool dev exited before listening:\n${output()}`);
      return output().includes(`spool dev listening on ${url}`);
    },
    timeoutMs,
  );
  return { url, pid: child.pid, child, output, exited };
}

/** A port nothing listens on now (bound and released at once). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
