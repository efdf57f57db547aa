import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type RunRecord } from '../store/types.js';

const ended = (run: RunRecord | null): boolean => run === null || TERMINAL_STATUSES.includes(run.status);

const reached = (deadline: string | undefined, now: Date): boolean =>
  deadline !== undefined && now.getTime() >= Date.parse(deadline);

/**
 * Whether the thing a waiting run waits for has happened, so a new pass would get past its wait.
 * Used after a pass suspends (the condition may have come true meanwhile) and when something changes.
 */
export async function waitIsOver(store: Store, run: RunRecord, now: Date): Promise<boolean> {
  const wait = run.wait;
  if (run.status !== 'waiting' || !wait) return run.status === 'waiting';
  switch (wait.kind) {
    case 'timer':
      return reached(wait.until, now);
    case 'signal':
      return reached(wait.deadline, now) || (await store.hasSignal(run.id, wait.name));
    case 'event':
      return (
        reached(wait.deadline, now) || (await store.findEvent(run.project, wait.type, wait.afterSeq, wait.subject)) !== null
      );
    case 'lease':
      return (await store.acquireLease(run.project, wait.group, run.id)) === run.id;
    case 'activity': {
      const activities = await store.listActivities(run.id);
      return wait.names.every((name) =>
        activities.some((activity) => activity.name === name && ['succeeded', 'failed'].includes(activity.status)),
      );
    }
    case 'child':
      return ended(await store.getRun(wait.runId));
    case 'children':
      for (const id of wait.runIds) if (ended(await store.getRun(id))) return true;
      return false;
  }
}

/** Makes the run due now if its wait is over; answers whether it did. */
export async function wakeIfOver(store: Store, runId: string, now: Date): Promise<boolean> {
  const run = await store.getRun(runId);
  return run !== null && wakeRunIfOver(store, run, now);
}

/** wakeIfOver of a run just read (or just written). */
export async function wakeRunIfOver(store: Store, run: RunRecord, now: Date): Promise<boolean> {
  return (await waitIsOver(store, run, now)) && store.wakeRun(run.id, now);
}

/** Queues a signal for a run and wakes it if it was waiting for that signal (spool signal, an approval's answer). */
export async function signalRun(store: Store, runId: string, name: string, payload: string, now: Date): Promise<void> {
  await store.sendSignal(runId, name, payload);
  await wakeIfOver(store, runId, now);
}
