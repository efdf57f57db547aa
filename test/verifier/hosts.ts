import { TERMINAL, cli, cliOk, freePort, getRun, journalOf, logOf, submit, type JournalView } from '../support/dev.js';
import { isAlive, runIdOf, startSpool, type SpoolProcess } from '../support/spool.js';
import { signalPayload, type Answered } from './deliveries.js';
import { killAll, until } from './processes.js';

/**
 * What a faulted run kills: the runner of `spool run` (the agent), a `spool dev` server, the
 * script alone, its runner left alive (as the kernel's OOM killer would, or a `kill -9`), or the
 * launcher that starts the scripts (src/agent/launcher.ts) alone, taking the script it started.
 * Or, killing nothing, `cancel`: a person's `spool cancel` of the run on `spool dev`, once, at a
 * random moment.
 */
export type Killed = 'runner' | 'dev-server' | 'script' | 'launcher' | 'cancel';

/**
 * Where a run's passes run, each in a new, empty directory (--fresh-dir, as a pod), and how the run
 * carries on after everything there was killed.
 */
export interface Host {
  /** What a fault kills, as the failure report says it. */
  readonly what: string;
  /** Starts the run; answers its id once it is recorded (a kill before that leaves nothing to carry on). */
  start: () => Promise<string>;
  /** Whether the run is over (or nothing is left to run it). */
  ended: () => boolean | Promise<boolean>;
  /** After killAll: waits for the killed process to be gone (the store is free once it is). */
  lost: () => Promise<void>;
  /** Carries the run on after lost(). */
  restart: (runId: string) => void | Promise<void>;
  /** Waits up to ms for the run to end, then stops whatever is left. */
  finish: (ms: number) => Promise<void>;
  /** What it printed (for a dev server, the run's log too). */
  output: () => string;
  /** Whether signals and events reach its runs: only through a server (`spool run` says so and takes none). */
  readonly takesDeliveries: boolean;
  /** What the run waits for now (its `awaiting`), null when it waits for nothing or cannot be asked. */
  awaiting: () => Promise<string | null>;
  /** Sends op's signal (`which` of its two payloads) or event as a user would, from outside the run. */
  deliver: (op: Answered, which: 'payload' | 'second') => Promise<void>;
  /** `spool cancel` of the run, as a person types it: what it printed, and the journal once it answered. */
  cancel: (runId: string) => Promise<{ output: string; journal: JournalView[] }>;
}

export interface CaseFiles {
  dir: string;
  dataDir: string;
  script: string;
  env: Record<string, string>;
}

/** `spool run --fresh-dir`, carried on with `spool resume --fresh-dir` after a kill. */
export function spoolRun({ dir, dataDir, script, env }: CaseFiles): Host {
  let runner: SpoolProcess | null = null;
  let output = '';
  const started = (args: string[]): SpoolProcess => (runner = startSpool([...args, '--fresh-dir', '--data-dir', dataDir], { cwd: dir, env }));
  const done = async (): Promise<void> => {
    if (runner) output += (await runner.done).output;
    runner = null;
  };
  return {
    what: 'the runner',
    async start() {
      const first = started(['run', script, '--with', 'bundle']);
      await until(() => /^ {2}run: /m.test(first.output()) || !isAlive(first.pid), 60_000);
      return runIdOf(first.output());
    },
    ended: () => !runner || !isAlive(runner.pid),
    lost: done,
    restart: (runId) => void started(['resume', runId]),
    async finish(ms) {
      const running = runner;
      if (running && !(await until(() => !isAlive(running.pid), ms, 100))) await killAll(dir);
      await done();
    },
    output: () => output,
    takesDeliveries: false,
    awaiting: () => Promise.resolve(null),
    deliver: () => Promise.reject(new Error('spool run takes no signal or event: only a server delivers them')),
    cancel: () => Promise.reject(new Error('a run of spool run is cancelled with Ctrl-C, not spool cancel: the faults cancel on spool dev')),
  };
}

const LISTENING = /spool dev listening on (http:\S+)/;

/**
 * A run submitted (`spool submit --with bundle`) to `spool dev --fresh-dir`; after a kill (the
 * server, its passes' scripts and its activities at once: a lost machine), `spool dev` is started
 * again on the same data dir and port and must carry the run on by itself. `adopt` starts it on a
 * data dir whose run `spool run` started instead: the server carries that run on (README: what
 * `spool run` says to do when a run waits for what only a server delivers).
 */
export function devServer({ dir, dataDir, script, env }: CaseFiles): Host & { adopt: (runId: string) => Promise<void> } {
  let server: SpoolProcess | null = null;
  let url = '';
  let runId = '';
  let output = '';
  const up = async (port: number): Promise<void> => {
    const started = startSpool(['dev', '--port', String(port), '--fresh-dir', '--data-dir', dataDir], { cwd: dir, env });
    server = started;
    await until(() => LISTENING.test(started.output()) || !isAlive(started.pid), 60_000, 50);
    const listening = LISTENING.exec(started.output())?.[1];
    if (!listening) throw new Error(`spool dev did not start:\n${output}${started.output()}`);
    url = listening;
  };
  const done = async (): Promise<void> => {
    if (server) output += (await server.done).output;
    server = null;
  };
  const ended = async (): Promise<boolean> => {
    if (!server || !isAlive(server.pid)) return true;
    // A server too busy to answer has not ended the run.
    return TERMINAL.includes((await getRun(url, runId).catch(() => null))?.status ?? '');
  };
  return {
    what: 'the dev server',
    async start() {
      await up(await freePort());
      runId = await submit(url, dir, script, '--with', 'bundle');
      return runId;
    },
    async adopt(id) {
      runId = id;
      await up(await freePort());
    },
    takesDeliveries: true,
    awaiting: async () => (await getRun(url, runId).catch(() => null))?.awaiting ?? null,
    async deliver(op, which) {
      if (op.kind === 'wait-event') {
        await cliOk(url, dir, ['event', 'emit', `${op.id}-type`, '--key', op.key, '--payload', JSON.stringify(op.payload)]);
        return;
      }
      // The second signal may find the run ended already (the first woke it and it ran to its end): refused, 409.
      const ended = (text: string): boolean => which === 'second' && text.includes('has ended');
      if (op.via === 'cli') {
        const sent = await cli(url, dir, ['signal', runId, op.id, op[which]]);
        if (sent.code !== 0 && !ended(sent.output)) throw new Error(`spool signal ${op.id} exited ${String(sent.code)}: ${sent.output}`);
        return;
      }
      const response = await fetch(`${url}/v1/runs/${encodeURIComponent(runId)}/signals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: op.id, payload: signalPayload(op, which) }),
      });
      const answer = await response.text();
      if (response.status !== 202 && !ended(answer)) throw new Error(`POST signals ${op.id}: ${response.status} ${answer}`);
    },
    async cancel(id) {
      const cancelled = await cli(url, dir, ['cancel', id]);
      if (cancelled.code !== 0) throw new Error(`spool cancel ${id} exited ${String(cancelled.code)}: ${cancelled.output}`);
      return { output: cancelled.output, journal: await journalOf(url, id) };
    },
    ended,
    lost: done,
    // The same port, as a machine that comes back; another if something took it meanwhile (spool dev
    // exits at once on a busy port; the run's status is read from whichever URL it says).
    restart: () =>
      up(Number(new URL(url).port)).catch(async (error: unknown) => {
        if (server && isAlive(server.pid)) throw error;
        await done();
        await up(await freePort());
      }),
    async finish(ms) {
      // Polled less often than a runner: each look is a request the loaded server answers.
      await until(ended, ms, 100);
      const running = server;
      let log = '';
      if (running && isAlive(running.pid)) {
        log = `  the run's log:\n${await logOf(url, runId).catch((error: unknown) => String(error))}`;
        process.kill(running.pid, 'SIGTERM');
        if (!(await until(() => !isAlive(running.pid), 10_000, 50))) await killAll(dir);
      }
      await done();
      output += log;
      // A pass the server was still running when stopped (the run did not end in time).
      await killAll(dir);
    },
    output: () => output,
  };
}

/** The host of a run with these faults; `answered`: the run takes signals or events, which need a server. */
export const hostFor = (killed: Killed, answered: boolean): ((files: CaseFiles) => Host) =>
  killed === 'dev-server' || killed === 'cancel' || (killedAlone(killed) && answered) ? devServer : spoolRun;

/** Whether the faults kill one process once, its runner left alive, rather than the runner and all. */
export const killedAlone = (killed: Killed): boolean => killed === 'script' || killed === 'launcher';
