import { constants } from 'node:os';
import { endAllScripts } from '../agent/script-process.js';
import { UsageError } from '../common/errors.js';
import { readWorkflowFile } from '../workflow-file/check.js';
import { checkProject } from '../engine/request-schema.js';
import { newRunId } from '../common/ids.js';
import { openStore, type StoreOptions } from '../store/open.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type RunRecord } from '../store/types.js';
import { Executor } from '../passes/executor.js';
import { flushTracing } from '../tracing/tracing.js';
import { checkoutFiles, storeRunCheckout } from './checkout-bundle.js';
import { captureLog, logsDirFor, removeEmptyRunDirs, teeLog } from '../passes/log-capture.js';
import { checkStartSettings } from './start-settings.js';

export interface LocalRunOptions extends StoreOptions {
  input?: string;
  lenient?: boolean;
  project?: string;
  maxResultBytes?: string;
  /** A directory to bundle with the run for `spool checkout` (docs/artifacts.md#checkout). */
  with?: string;
  /** Each pass in a new, empty working directory, as on a cluster. */
  freshDir?: boolean;
}

/** Exit status of `spool run` when the run waits for something only a server can deliver. */
export const EXIT_WAITING = 75;

const say = (line: string): void => void process.stderr.write(`  ${line}\n`);

export function parseInput(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--input is not valid JSON: ${text.length > 60 ? `${text.slice(0, 60)}...` : text}`);
  }
}

/** A run a pipeline started for one of its jobs (or one item of a fan_out): `<pipeline file>#<job>`. */
function isPipelineJob(run: RunRecord): boolean {
  return run.parentId !== null && run.workflow.includes('#');
}

/** The job name of a pipeline's approval gate run (its input says what the gate asks), else null. */
function approvalGateOf(run: RunRecord): string | null {
  if (!isPipelineJob(run)) return null;
  const approval = (run.input as { approval?: { job?: unknown } } | null)?.approval;
  return typeof approval?.job === 'string' ? approval.job : null;
}

/** A wait `spool run` can see through by itself; signals and events need a server to arrive. */
function resolvesLocally(run: RunRecord): boolean {
  const wait = run.wait;
  if (!wait) return true;
  if (wait.kind === 'signal' || wait.kind === 'event') return wait.deadline !== undefined;
  return true;
}

/** `spool run FILE`: records a run on the local store and takes it through as many passes as it needs. */
export async function runLocal(file: string, options: LocalRunOptions): Promise<number> {
  checkStartSettings();
  const { script, interpreter } = readWorkflowFile(file);
  const input = parseInput(options.input);
  const limit = maxResultBytes(options.maxResultBytes);
  const project = options.project ?? 'default';
  checkProject(project);
  // Checked before the store opens: a directory over the limit records nothing.
  const checkout = options.with === undefined ? null : checkoutFiles(options.with);
  const store = await openStore(options);
  try {
    const id = newRunId('dev', project);
    // Stored before the run exists, so its first pass finds it.
    if (checkout) await storeRunCheckout(store, id, checkout.files);
    const { run } = await store.createRun({
      id,
      project,
      workflow: file,
      interpreter,
      script,
      input,
      cwd: process.cwd(),
      lenient: options.lenient ?? false,
    });
    say(`run: ${run.id}`);
    return await follow(store, run.id, options, limit);
  } finally {
    await store.close();
  }
}

/** `spool resume RUN`: carries on a run whose runner died, replaying its journal. */
export async function resumeLocal(runId: string, options: LocalRunOptions): Promise<number> {
  checkStartSettings();
  const limit = maxResultBytes(options.maxResultBytes);
  const store = await openStore(options);
  try {
    const run = await store.getRun(runId);
    if (!run) throw new UsageError(`no run ${runId} in this store`);
    // An ended run has nothing to carry on: say how it ended rather than wait for it forever.
    if (TERMINAL_STATUSES.includes(run.status)) {
      throw new UsageError(`run ${runId} has ended (${run.status}${run.error ? `: ${run.error}` : ''}); there is nothing to resume`);
    }
    // Its children too (spool call, spawn): the runner that died ran their passes, and a child it left
    // running would never run again, nor would the run waiting for it.
    await store.recoverInterruptedRuns(new Date(), await familyOf(store, runId));
    // An activity the dead runner left `running` would never run again and the run would wait for good.
    // The embedded store's pid lock means no live process is running it; a shared server may be.
    if (!options.databaseUrl) await store.requeueRunningActivities();
    if (run.status === 'waiting') await store.wakeRun(runId, new Date());
    say(`run: ${run.id} (resumed)`);
    return await follow(store, runId, options, limit);
  } finally {
    await store.close();
  }
}

/** The run and the unfinished runs it started, theirs too: what its runner executes (`owns`). */
async function familyOf(store: Store, runId: string): Promise<string[]> {
  const ids = [runId];
  // for...of goes on to the ids pushed meanwhile: grandchildren, and so on.
  for (const id of ids) {
    const children = await store.listRuns({ parentId: id, status: ['pending', 'running', 'waiting'], limit: 10_000 });
    ids.push(...children.map((child) => child.id));
  }
  return ids;
}

function maxResultBytes(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--max-result-bytes takes a number of bytes, not '${text}'`);
  return Number(text);
}

async function follow(store: Store, rootId: string, options: LocalRunOptions, limit: number | undefined): Promise<number> {
  const family = new Set([rootId]);
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));
  // A pipeline's jobs write to the store's log, which the pipeline prints as each job ends and
  // reads a fan_out item's result from (as under spool dev); everything else prints as it runs,
  // and is kept in the store's log too.
  const logsDir = logsDirFor(options);
  removeEmptyRunDirs(logsDir);
  const executor = new Executor(store, {
    output: (run) => (isPipelineJob(run) ? captureLog(store, logsDir, run) : teeLog(store, logsDir, run)),
    lenient: options.lenient ?? false,
    freshDir: options.freshDir ?? false,
    ...(limit === undefined ? {} : { maxResultBytes: limit }),
    async owns(id) {
      if (family.has(id)) return true;
      const parent = (await store.getRun(id))?.parentId;
      if (parent && family.has(parent)) family.add(id);
      return family.has(id);
    },
    onPassEnd(run) {
      const gate = approvalGateOf(run);
      if (gate && run.status === 'waiting') {
        say(
          `${rootId} waiting for approval at '${gate}', which spool run cannot take: start spool dev here (it carries on ` +
            `this run), then spool approve ${rootId} ${gate} (or spool reject), or answer from the run page`,
        );
        finish(EXIT_WAITING);
      }
      if (run.id !== rootId) return;
      if (TERMINAL_STATUSES.includes(run.status)) {
        say(run.status === 'succeeded' ? `${run.id} succeeded` : `${run.id} ${run.status}: ${run.error ?? ''}`);
        finish(run.status === 'succeeded' ? 0 : 1);
      } else if (run.status === 'waiting' && !resolvesLocally(run)) {
        say(`${run.id} waiting for ${run.awaiting ?? '?'}, which only a server delivers: use spool dev and spool submit`);
        finish(EXIT_WAITING);
      }
    },
  });
  // Ctrl-C or a SIGTERM stops this runner, not the run: its passes are abandoned unsettled (the
  // scripts are ended), so the run stays resumable, and `spool resume` replays it.
  // It exits as a shell reports a command a signal ended: 128 + the signal's number.
  let interrupted = false;
  const interrupt = (signal: 'SIGINT' | 'SIGTERM'): void => {
    interrupted = true;
    finish(128 + constants.signals[signal]);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  executor.start();
  try {
    return await done;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    if (interrupted) {
      await executor.abandon();
      endAllScripts(); // activities under way too: the resumed run queues them again
      say(`${rootId} interrupted; its journal is kept: carry on with 'spool resume ${rootId}'`);
    } else {
      await executor.stop();
    }
    // The last pass's spans, and the run's own, go out before `spool run` exits.
    await flushTracing();
  }
}
