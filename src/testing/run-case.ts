import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ensureError } from '../common/errors.js';
import { formatDuration } from '../common/duration.js';
import { newRunId, projectOfRunId } from '../common/ids.js';
import { runsInProcess } from '../common/workflow-file.js';
import { cancelRun } from '../engine/cancel.js';
import { eventArrived } from '../engine/events.js';
import { signalRun } from '../engine/wake.js';
import { Executor } from '../passes/executor.js';
import { captureLog } from '../passes/log-capture.js';
import { answerGate } from '../server/approvals.js';
import type { ServerContext } from '../server/context.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type JournalEntry, type RunRecord, type ScriptSource } from '../store/types.js';
import type { Delivery, TestCase } from './test-file.js';

/** How a case's run went: what its expectations are checked against (expectations.ts). */
export interface CaseRun {
  /** The run the expectations are about: the case's only run, or the last one it started. */
  run: RunRecord;
  /** Every run the case started (handlers and schedules start several), oldest first. */
  runs: RunRecord[];
  /**
   * What the run reached, in order: a script's steps (and those of the runs it called), a
   * pipeline's jobs that ran, a graph's script and http nodes.
   */
  steps: string[];
  journal: JournalEntry[];
  log: string;
  /** The cells the expectations name (`KEY` of the run, `ENTITY/KEY` of an entity); null where absent. */
  state: Record<string, string | null>;
  /** Virtual time from the start until the last run ended (or until the case stopped waiting). */
  virtualMs: number;
  /** What the timeline could not do: a signal to a run that had ended, an approval nobody asked for. */
  problems: string[];
}

/** The longest a case may run on its virtual clock: a workflow still waiting then is stuck. */
const HORIZON_MS = 3_650 * 86_400_000;
/** How long a case may take in real time (its steps run for real). */
const REAL_LIMIT_MS = 10 * 60_000;

/**
 * One test case: the workflow run on the store with a virtual clock, which stands still while
 * anything runs and, once everything waits, jumps to the next moment something is due (a sleep's
 * end, a timeout, a retry, a schedule's tick) or the test delivers something. A case ends when its
 * runs have ended, or when nothing more can happen (a run waits for what the test never sends).
 */
export async function runCase(store: Store, source: ScriptSource, testCase: TestCase, project: string, options: { freshDir?: boolean } = {}): Promise<CaseRun> {
  const startMs = Date.now();
  let nowMs = startMs;
  const now = (): Date => new Date(nowMs);
  const logsDir = mkdtempSync(join(tmpdir(), 'spool-test-'));
  const executor = new Executor(store, {
    output: (run) => captureLog(store, logsDir, run),
    now,
    env: 'test',
    pollMs: 20,
    freshDir: options.freshDir ?? false,
    schedules: testCase.start.kind === 'schedule',
    owns: (id) => Promise.resolve(projectOfRunId(id) === project),
    stubs: { step: (name) => testCase.steps.get(name) ?? null, http: (node) => testCase.http.get(node) ?? null },
  });
  const context: ServerContext = {
    store,
    env: 'test',
    defaultProject: project,
    now,
    poke: () => executor.poke(),
    abortPass: (runId) => executor.abortPass(runId),
  };
  const problems: string[] = [];
  const pending = [...testCase.deliveries];
  const realDeadline = Date.now() + REAL_LIMIT_MS;
  try {
    await startWorkflow(store, source, testCase, project, now());
    executor.start();
    for (;;) {
      await untilQuiet(executor, store, () => nowMs, realDeadline);
      const roots = await rootRuns(store, project);
      if (pending[0] && startMs + pending[0].atMs <= nowMs) {
        const problem = await deliver(context, roots, pending.shift()!, project);
        if (problem) problems.push(problem);
        executor.poke();
        continue;
      }
      const { start } = testCase;
      if (start.kind === 'schedule' && roots.length >= start.ticks) await store.deleteSchedule(project, 'test');
      const moreStarts = (start.kind === 'handler' && pending.some((each) => each.kind === 'event')) || (start.kind === 'schedule' && roots.length < start.ticks);
      if (!moreStarts && roots.every((run) => TERMINAL_STATUSES.includes(run.status))) break;
      const due = await store.nextDueAt();
      const candidates = [due?.getTime(), pending[0] ? startMs + pending[0].atMs : undefined].filter((at): at is number => at !== undefined && at > nowMs);
      if (candidates.length === 0) break;
      const next = Math.min(...candidates);
      if (next - startMs > HORIZON_MS) break;
      nowMs = next;
      executor.poke();
    }
    for (const left of pending) problems.push(`${describe(left)} was not delivered: nothing was left to take it`);
    return await collect(store, project, startMs, nowMs, problems, Object.keys(testCase.expect.state ?? {}));
  } finally {
    await executor.stop();
    // Whatever still waits is ended, and the triggers go, so the next case's clock finds none of it
    // due (the store is shared; each case is a project of its own).
    for (const run of await store.listRuns({ project, status: ['pending', 'running', 'waiting'], limit: 10_000 })) await cancelRun(store, run.id, now(), 'the test case ended');
    await store.deleteSchedule(project, 'test');
    await store.deleteHandler(project, 'test');
    rmSync(logsDir, { recursive: true, force: true });
  }
}

async function startWorkflow(store: Store, source: ScriptSource, testCase: TestCase, project: string, at: Date): Promise<void> {
  const { start } = testCase;
  if (start.kind === 'once') {
    await store.createRun({ id: newRunId('test', project), project, ...source, input: testCase.input });
  } else if (start.kind === 'handler') {
    await store.putHandler({ project, name: 'test', eventType: start.on, ...source });
  } else {
    await store.putSchedule({ project, name: 'test', everyMs: start.everyMs, cron: null, nextAt: at, input: testCase.input, ...source });
  }
}

/** Until nothing runs and nothing is due at the clock's time, three looks in a row. */
async function untilQuiet(executor: Executor, store: Store, now: () => number, deadline: number): Promise<void> {
  for (let quietLooks = 0; quietLooks < 3; ) {
    if (Date.now() > deadline) throw new Error(`the case ran for over ${formatDuration(REAL_LIMIT_MS)} of real time`);
    await delay(10);
    const due = await store.nextDueAt();
    const quiet = executor.quiet && (due === null || due.getTime() > now());
    quietLooks = quiet ? quietLooks + 1 : 0;
  }
}

/** Runs the case started itself (not its runs' children), oldest first. */
async function rootRuns(store: Store, project: string): Promise<RunRecord[]> {
  return (await store.listRuns({ project, limit: 10_000 })).filter((run) => run.parentId === null).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** One thing the test sends, as `spool signal`, `spool event emit` and `spool approve` would; a problem when it cannot be. */
async function deliver(context: ServerContext, roots: RunRecord[], delivery: Delivery, project: string): Promise<string | null> {
  const { store } = context;
  if (delivery.kind === 'event') {
    const event = await store.emitEvent({ id: `evt-${randomUUID()}`, project, type: delivery.type, subject: delivery.key, payload: delivery.payload });
    await eventArrived(store, context.env, event, context.now());
    return null;
  }
  const run = roots.at(-1);
  if (!run) return `${describe(delivery)}: no run had started`;
  if (TERMINAL_STATUSES.includes(run.status)) return `${describe(delivery)}: the run had ended (${run.status})`;
  if (delivery.kind === 'signal') {
    await signalRun(store, run.id, delivery.name, delivery.payload, context.now());
    return null;
  }
  try {
    await answerGate(context, run, delivery.job, delivery.answer, delivery.values, { user: delivery.by, groups: [] }, 'api');
    return null;
  } catch (error) {
    return `${describe(delivery)}: ${ensureError(error).message}`;
  }
}

function describe(delivery: Delivery): string {
  const at = `at ${formatDuration(delivery.atMs)}`;
  if (delivery.kind === 'signal') return `the signal '${delivery.name}' ${at}`;
  if (delivery.kind === 'event') return `the event '${delivery.type}' ${at}`;
  return `the ${delivery.answer === 'approve' ? 'approval' : 'rejection'} of '${delivery.job}' ${at}`;
}

async function collect(store: Store, project: string, startMs: number, nowMs: number, problems: string[], stateKeys: string[]): Promise<CaseRun> {
  const runs = await rootRuns(store, project);
  const run = runs.at(-1);
  if (!run) throw new Error('the case started no run: no event reached its handler and no schedule ticked');
  const { steps, log } = runsInProcess(run) ? await documentSteps(store, run) : await scriptSteps(store, run);
  const ended = runs.map((each) => each.finishedAt?.getTime() ?? nowMs);
  const state: Record<string, string | null> = {};
  for (const key of stateKeys) {
    const slash = key.indexOf('/');
    const scope = slash > 0 ? `entity:${key.slice(0, slash)}` : `run:${run.id}`;
    state[key] = (await store.getCell(project, scope, slash > 0 ? key.slice(slash + 1) : key))?.value ?? null;
  }
  return {
    run,
    runs,
    steps,
    journal: await store.readJournal(run.id),
    log,
    state,
    virtualMs: Math.max(...ended) - startMs,
    problems,
  };
}

/** A script's steps and step functions, and those of the runs it called, in the order they were reached; their logs. */
async function scriptSteps(store: Store, run: RunRecord): Promise<{ steps: string[]; log: string }> {
  const family = [run];
  for (const member of family) family.push(...(await store.listRuns({ parentId: member.id, limit: 10_000 })).reverse());
  const reached: { at: number; order: number; name: string }[] = [];
  const logs: string[] = [];
  for (const [order, member] of family.entries()) {
    const times = new Map((await store.readJournalTimes(member.id)).filter((t) => t.kind === 'call').map((t) => [t.position, t.at.getTime()]));
    for (const entry of await store.readJournal(member.id)) {
      if (entry.kind === 'call' && (entry.verb === 'step' || entry.verb === 'step_fn')) reached.push({ at: times.get(entry.position) ?? 0, order, name: entry.name });
    }
    logs.push(await logOf(store, member.id));
  }
  reached.sort((a, b) => a.at - b.at || a.order - b.order);
  return { steps: reached.map((each) => each.name), log: logs.join('') };
}

/**
 * A pipeline's jobs or a graph's script and http nodes that ran, in the order its coordinator
 * reached them (a skipped job is not there); its log, which holds its jobs' and nodes' logs.
 */
async function documentSteps(store: Store, run: RunRecord): Promise<{ steps: string[]; log: string }> {
  const steps: string[] = [];
  for (const entry of await store.readJournal(run.id)) {
    if (entry.kind !== 'call') continue;
    const child = typeof entry.data.workflow === 'string' ? entry.data.workflow : '';
    if ((entry.verb === 'spawn' || entry.verb === 'call') && child.includes('#')) steps.push(child.slice(child.lastIndexOf('#') + 1));
    else if (entry.verb === 'step_fn' && entry.name.startsWith('node ')) steps.push(entry.name.slice('node '.length));
  }
  return { steps, log: await logOf(store, run.id) };
}

async function logOf(store: Store, runId: string): Promise<string> {
  return (await store.readLogs(runId)).map((line) => line.text).join('');
}
