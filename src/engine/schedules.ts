import { CronExpressionParser } from 'cron-parser';
import { UsageError } from '../common/errors.js';
import { newRunId } from '../common/ids.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type ScheduleRecord } from '../store/types.js';

export type Cadence = { everyMs: number; cron: null } | { everyMs: null; cron: string };

/** Refuses a cron expression that does not parse, with the parser's reason. */
export function checkCron(expression: string): void {
  try {
    CronExpressionParser.parse(expression);
  } catch (error) {
    throw new UsageError(`bad cron expression '${expression}': ${(error as Error).message}`);
  }
}

/** The first tick strictly after `after`; ticks missed while nothing ran are not made up. */
export function nextTick(cadence: Cadence, after: Date, previous?: Date): Date {
  if (cadence.cron !== null) return CronExpressionParser.parse(cadence.cron, { currentDate: after }).next().toDate();
  let next = (previous ?? after).getTime() + cadence.everyMs;
  if (next <= after.getTime()) next = after.getTime() + cadence.everyMs;
  return new Date(next);
}

/**
 * Starts a run for each due schedule, unless its previous run is still going: then the tick is
 * skipped, so two runs of one schedule never overlap (unless the schedule allows overlap).
 */
export async function tickSchedules(store: Store, env: string, now: Date): Promise<string[]> {
  const started: string[] = [];
  for (const schedule of await store.dueSchedules(now)) {
    const next = nextTick(cadenceOf(schedule), now, schedule.nextAt);
    const previous = schedule.lastRunId ? await store.getRun(schedule.lastRunId) : null;
    if (schedule.overlap !== 'allow' && previous && !TERMINAL_STATUSES.includes(previous.status)) {
      await store.advanceSchedule(schedule.project, schedule.name, next, { skipped: true });
      continue;
    }
    const { run } = await store.createRun({
      id: newRunId(env, schedule.project),
      project: schedule.project,
      workflow: schedule.workflow,
      interpreter: schedule.interpreter,
      script: schedule.script,
      cwd: schedule.cwd,
      runner: schedule.runner ?? null,
      input: schedule.input ?? { schedule: schedule.name, tick: schedule.nextAt.toISOString() },
    });
    await store.advanceSchedule(schedule.project, schedule.name, next, { runId: run.id });
    started.push(run.id);
  }
  return started;
}

function cadenceOf(schedule: ScheduleRecord): Cadence {
  return schedule.cron !== null ? { everyMs: null, cron: schedule.cron } : { everyMs: schedule.everyMs ?? 60_000, cron: null };
}
