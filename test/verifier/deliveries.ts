import type { Op } from './generate.js';

/** An op the harness answers from outside: a signal or an event it sends. */
export type Answered = Extract<Op, { kind: 'wait-signal' | 'wait-event' }>;

export const isAnswered = (op: Op): op is Answered => op.kind === 'wait-signal' || op.kind === 'wait-event';

/** What the harness posts as a signal's payload: `spool signal`'s text, or through the API a JSON object. */
export const signalPayload = (op: Extract<Op, { kind: 'wait-signal' }>, which: 'payload' | 'second'): unknown =>
  op.via === 'cli' ? op[which] : { note: op[which] };

/**
 * What the wait prints (its recorded result, then a newline; nothing for an empty one): a signal's
 * text as it was sent, an object sent through the API as its JSON; an event's payload as its JSON.
 */
export function printed(op: Answered): Buffer {
  const sent = op.kind === 'wait-signal' ? signalPayload(op, 'payload') : op.payload;
  const text = typeof sent === 'string' ? sent : JSON.stringify(sent);
  return Buffer.from(text === '' ? '' : `${text}\n`);
}

/** The recorded result of the wait that took the first delivery, as the journal keeps it. */
export function recordedResult(op: Answered): unknown {
  if (op.kind === 'wait-signal') {
    const sent = signalPayload(op, 'payload');
    return { payload: typeof sent === 'string' ? sent : JSON.stringify(sent) };
  }
  return op.payload;
}

/** The run's `awaiting` while it waits for op (what the harness polls for before answering). */
export const awaitingOf = (op: Answered): string => (op.kind === 'wait-signal' ? `signal ${op.id}` : `event ${op.id}-type`);
