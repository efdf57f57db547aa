import type { ActivityRecord } from '../../store/types.js';
import type { PassState as Pass, Reached } from '../pass-state.js';
import type { ActivityRunRequest, ActivitySpec, ActivitySubmitRequest, ActivityWaitRequest, Answer } from '../protocol.js';
import { EXIT } from '../protocol.js';
import { lastLineOf } from '../failed-command.js';
import { tailOf } from '../../common/stderr-tail.js';
import { OK, commandAnswer } from './answers.js';

const NAMED = ['activity.submit', 'activity.run'] as const;

export const activityId = (runId: string, name: string): string => `${runId}/${name}`;

const isFinal = (activity: ActivityRecord | null): activity is ActivityRecord =>
  activity !== null && isDone(activity);

const isDone = (activity: ActivityRecord): boolean => activity.status === 'succeeded' || activity.status === 'failed';

/** Refuses a second use of a name (its wait could never tell them apart) or a capability nobody offers. */
function checkNew(pass: Pass, position: number, spec: ActivitySpec): void {
  if (pass.host.noActivities) pass.refuse(pass.host.noActivities);
  const other = pass.findRecorded(NAMED, spec.name, position);
  if (other) {
    pass.refuse(
      `activity name '${spec.name}' is already used in this run (call ${other.position + 1}); ` +
        `names must be unique within a run, so put the item in the name (probe-eu-north, probe-us-east, ...)`,
    );
  }
  const missing = spec.requires.filter((capability) => !pass.host.capabilities.includes(capability));
  if (missing.length > 0) {
    pass.refuse(
      `${pass.host.capabilitiesOfferedBy ?? 'no agent here offers'} ${missing.map((c) => `'${c}'`).join(', ')} (offered: ${pass.host.capabilities.join(', ') || 'none'})`,
    );
  }
  const refusal = pass.host.activityRefusal?.(spec.requires);
  if (refusal) pass.refuse(refusal);
}

async function queue(pass: Pass, reached: Reached, spec: ActivitySpec): Promise<void> {
  const { run } = pass;
  const id = activityId(run.id, spec.name);
  await pass.store.transaction(async (tx) => {
    await pass.record(reached, 'call', { activityId: id }, tx);
    await tx.createActivity({
      id,
      runId: run.id,
      name: spec.name,
      argv: spec.argv,
      cwd: run.cwd,
      requires: spec.requires,
      maxAttempts: spec.attempts,
      backoffMs: spec.backoffMs,
      retryOnExit: spec.retryOnExit,
      // The host's clock, as its retries use: a database whose clock runs ahead (or spool test's
      // virtual one behind) must not hold the first attempt back.
      dueAt: pass.host.now(),
    });
    if (reached.verb === 'activity.submit') await pass.record(reached, 'result', { activityId: id }, tx);
  });
  pass.host.notify({ kind: 'activity-queued', id });
}

export async function activitySubmit(pass: Pass, request: ActivitySubmitRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('activity.submit', request.name, (position) => checkNew(pass, position, request)));
  if (!reached.result) await queue(pass, reached, request);
  return { ...OK, replayed: reached.call !== null };
}

/**
 * What a wait records of a final activity. A failed one's last attempt's stderr tail goes beside the
 * answer, for people (the run page, `spool status`, a Run's message): commandAnswer never returns it.
 */
function resultOf(activity: ActivityRecord): Record<string, unknown> {
  const result = activity.result ?? { stdout: '', exitCode: 1, attempts: activity.attempt };
  const failed = result.exitCode !== 0;
  const attempts = `${result.attempts} attempt${result.attempts === 1 ? '' : 's'}`;
  return {
    ...('stdoutBase64' in result ? { stdoutBase64: result.stdoutBase64 } : { stdout: result.stdout }),
    exitCode: result.exitCode,
    attempts: result.attempts,
    ...(failed ? { stderr: `spool: activity ${activity.name} failed with exit ${result.exitCode} after ${attempts}` } : {}),
    ...(failed && result.stderrTail ? { stderrTail: result.stderrTail } : {}),
  };
}

async function collect(pass: Pass, reached: Reached, name: string): Promise<Answer> {
  const activity = await pass.store.getActivity(activityId(pass.run.id, name));
  if (isFinal(activity)) return commandAnswer((await pass.record(reached, 'result', resultOf(activity))).data, false);
  return pass.suspend({ awaiting: `activity ${name}`, wait: { kind: 'activity', names: [name] }, wakeAt: null });
}

export async function activityRun(pass: Pass, request: ActivityRunRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('activity.run', request.name, (position) => checkNew(pass, position, request)));
  if (reached.result) return commandAnswer(reached.result.data, true);
  if (!reached.call) await queue(pass, reached, request);
  return collect(pass, reached, request.name);
}

export async function activityWait(pass: Pass, request: ActivityWaitRequest): Promise<Answer> {
  if ('all' in request) return activityWaitAll(pass);
  const { name } = request;
  const reached = pass.take(
    pass.peek('activity.wait', name, () => {
      if (!pass.findRecorded(NAMED, name, -1)) pass.refuse(`no activity named '${name}' was submitted in this run; submit it before waiting for it`);
    }),
  );
  if (reached.result) return commandAnswer(reached.result.data, true);
  if (!reached.call) await pass.record(reached, 'call', {});
  return collect(pass, reached, name);
}

function allAnswer(data: Record<string, unknown>, replayed: boolean): Answer {
  const failed = (data.failed as string[] | undefined) ?? [];
  if (failed.length === 0) return { ...OK, replayed };
  return {
    status: 'ok',
    exitCode: EXIT.failure,
    stderr: `spool: ${failed.length} of ${Number(data.total)} activities failed: ${failed.join(', ')}`,
    replayed,
  };
}

async function activityWaitAll(pass: Pass): Promise<Answer> {
  const reached = pass.take(pass.peek('activity.wait', '*'));
  if (reached.result) return allAnswer(reached.result.data, true);
  if (!reached.call) await pass.record(reached, 'call', {});
  const activities = await pass.store.listActivities(pass.run.id);
  const pending = activities.filter((activity) => !isDone(activity)).map((activity) => activity.name);
  if (pending.length > 0) {
    return pass.suspend({
      awaiting: `activity ${pending.join(', ')}`,
      wait: { kind: 'activity', names: pending },
      wakeAt: null,
    });
  }
  const failed = activities.filter((activity) => activity.status === 'failed');
  const names = failed.map((activity) => activity.name);
  return allAnswer((await pass.record(reached, 'result', { failed: names, total: activities.length, ...failedTail(failed) })).data, false);
}

/**
 * Beside a `wait --all` that found failures, for people (as a single wait keeps its activity's):
 * an exit code, and a tail of one line per failed activity that said something, `NAME: its last
 * line`, cut as a command's is. The answer is read from `failed` alone, so a record from before
 * these fields replays the same.
 */
function failedTail(failed: ActivityRecord[]): { exitCode?: number; stderrTail?: string } {
  if (failed.length === 0) return {};
  const lines = failed.flatMap((activity) => {
    const said = lastLineOf(activity.result?.stderrTail ?? '');
    return said ? [`${activity.name}: ${said}`] : [];
  });
  return { exitCode: EXIT.failure, ...(lines.length ? { stderrTail: tailOf(lines.join('\n')) } : {}) };
}
