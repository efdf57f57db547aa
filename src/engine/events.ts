import { derivedRunId } from '../common/ids.js';
import type { Store } from '../store/store.js';
import type { EventRecord } from '../store/types.js';
import { wakeIfOver } from './wake.js';

/**
 * Starts one run per handler of the event's type. The run id comes from the event id and the
 * handler name, so the same event delivered twice resolves to the same run.
 */
export async function deliverEvent(store: Store, env: string, event: EventRecord): Promise<string[]> {
  const started: string[] = [];
  for (const handler of await store.listHandlers(event.project, event.type)) {
    const { run } = await store.createRun({
      id: derivedRunId(env, event.project, event.id, handler.name),
      project: event.project,
      workflow: handler.workflow,
      interpreter: handler.interpreter,
      script: handler.script,
      cwd: handler.cwd,
      runner: handler.runner ?? null,
      handler: handler.name,
      subject: event.subject,
      input: { id: event.id, type: event.type, subject: event.subject, payload: event.payload },
    });
    started.push(run.id);
  }
  return started;
}

/** Wakes the runs whose `wait event` this event ends. */
export async function wakeEventWaiters(store: Store, event: EventRecord, now: Date): Promise<void> {
  // Only the runs waiting for this type: with a thousand runs asleep, reading every waiting run for
  // every event was what capped the events a second a server could take (docs/benchmarks.md).
  for (const id of await store.listEventWaiters(event.project, event.type)) await wakeIfOver(store, id, now);
}

/** What an event does once stored: starts its handlers' runs and ends the waits on it. Answers the runs started. */
export async function eventArrived(store: Store, env: string, event: EventRecord, now: Date): Promise<string[]> {
  const started = await deliverEvent(store, env, event);
  await wakeEventWaiters(store, event, now);
  return started;
}
