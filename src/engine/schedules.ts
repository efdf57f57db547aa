import type * as CronParser from 'cron-parser';
import { loadWhenUsed } from '../common/load-when-used.js';
import { UsageError } from '../common/errors.js';
import { newRunId } from '../common/ids.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type ScheduleRecord } from '../store/types.js';

const cronParser = loadWhenUsed<typeof CronParser>('cron-parser');

export type Cadence = { everyMs: number; cron: null } | { everyMs: null; cron: string };

/** Refuses a cron expression that does not parse, with the parser's reason. */
export function checkCron(expression: string): void {
  try {
    cronParser().CronExpressionParser.parse(expression);
  } catch (error) {
    throw new UsageError(`bad cron expression '${expression}': ${(error as Error).message}`);
  }
}

/** The first tick strictly after `after`; ticks missed while nothing ran are not made up. */
export function nextTick(cadence: Cadence, after: Date, previous?: Date): Date {
  if (cadence.cron !== null) return cronParser().CronExpressionParser.parse(cadence.cron, { currentDate: after }).next().toDate();
  let next = (previous ?? after).getTime() + cadence.everyMs;
  if (next <= after.getTime()) next = after.getTime() + cadence.everyMs;
  return new Date(next);
}

/**
 * Starts a run for each due schedule, unless its previous run is still going: then the tick is
 * skipped, so two runs of one schedule never overlap (unless the schedule allows overlap). Each
 * tick is claimed in the store with the run it starts, in one transaction, so however many
 * executors tick at once a tick starts one run, and a crash before the commit leaves it due.
 */
export async function tickSchedules(store: Store, env: string, now: Date): Promise<string[]> {
  const started: string[] = [];
  for (const schedule of await store.dueSchedules(now)) {
    const runId = await store.transaction((tx) => tickOnce(tx, env, schedule, now));
    if (runId) started.push(runId);
  }
  return started;
}

/** One due tick of one schedule: the run it started, or null when it was skipped or claimed elsewhere. */
async function tickOnce(store: Store, env: string, schedule: ScheduleRecord, now: Date): Promise<string | null> {
  const { project, name } = schedule;
  const next = nextTick(cadenceOf(schedule), now, schedule.nextAt);
  if (!(await store.claimScheduleTick(project, name, schedule.nextAt, next))) return null;
  const previous = schedule.lastRunId ? await store.getRun(schedule.lastRunId) : null;
  if (schedule.overlap !== 'allow' && previous && !TERMINAL_STATUSES.includes(previous.status)) {
    await store.noteScheduleTick(project, name, { skipped: true });
    return null;
  }
  return startScheduledRun(store, env, schedule, schedule.nextAt);
}

/** A run of the schedule's script for this tick, noted as its last run. */
async function startScheduledRun(store: Store, env: string, schedule: ScheduleRecord, tick: Date): Promise<string> {
  const { project, name } = schedule;
  const { run } = await store.createRun({
    id: newRunId(env, project),
    project,
    workflow: schedule.workflow,
    interpreter: schedule.interpreter,
    script: schedule.script,
    cwd: schedule.cwd,
    runner: schedule.runner ?? null,
    input: schedule.input ?? { schedule: name, tick: tick.toISOString() },
    schedule: name,
  });
  await store.noteScheduleTick(project, name, { runId: run.id });
  return run.id;
}

/**
 * Starts a run of a schedule now, outside its cadence (as `kubectl create job --from=cronjob/...`
 * does): its next tick stays where it was, and overlap does not hold it back.
 */
export async function triggerSchedule(store: Store, env: string, project: string, name: string, now: Date): Promise<string | null> {
  const schedule = (await store.listSchedules(project)).find((candidate) => candidate.name === name);
  if (!schedule) return null;
  return store.transaction((tx) => startScheduledRun(tx, env, schedule, now));
}

/**
 * Resumes a suspended schedule: its next tick is the first one after now, so the ticks it missed
 * while suspended are not made up. Null when there is no such schedule.
 */
export async function resumeSchedule(store: Store, project: string, name: string, now: Date): Promise<ScheduleRecord | null> {
  const schedule = (await store.listSchedules(project)).find((candidate) => candidate.name === name);
  if (!schedule) return null;
  return store.resumeSchedule(project, name, nextTick(cadenceOf(schedule), now));
}

function cadenceOf(schedule: ScheduleRecord): Cadence {
  return schedule.cron !== null ? { everyMs: null, cron: schedule.cron } : { everyMs: schedule.everyMs ?? 60_000, cron: null };
}
