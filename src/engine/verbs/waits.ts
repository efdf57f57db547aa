import { formatDuration } from '../../common/duration.js';
import type { PassState as Pass } from '../pass-state.js';
import type { Answer, SleepRequest, WaitEventRequest, WaitSignalRequest } from '../protocol.js';
import { EXIT } from '../protocol.js';
import { OK } from './answers.js';

const iso = (date: Date): string => date.toISOString();

export async function sleep(pass: Pass, request: SleepRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('sleep', ''));
  if (reached.result) return { ...OK, replayed: true };
  const now = pass.host.now();
  const until = String((reached.call ?? (await pass.record(reached, 'call', { until: iso(new Date(now.getTime() + request.ms)) }))).data.until);
  if (now.getTime() >= Date.parse(until)) {
    await pass.record(reached, 'result', {});
    return OK;
  }
  return pass.suspend({ awaiting: `timer ${until}`, wait: { kind: 'timer', until }, wakeAt: new Date(until) });
}

function deadlineOf(pass: Pass, timeoutMs: number | undefined): string | null {
  return timeoutMs === undefined ? null : iso(new Date(pass.host.now().getTime() + timeoutMs));
}

/** A wait that timed out exits 124 and says so on stderr (it shows in the run's log). */
function timedOut(what: string, data: Record<string, unknown>, replayed: boolean): Answer {
  const after = typeof data.timeoutMs === 'number' ? ` after ${formatDuration(data.timeoutMs)}` : '';
  return { status: 'ok', exitCode: EXIT.timedOut, stderr: `spool: ${what} timed out${after}`, replayed };
}

function signalAnswer(name: string, call: Record<string, unknown>, result: Record<string, unknown>, replayed: boolean) {
  if (result.timedOut) return timedOut(`wait signal ${name}`, call, replayed);
  const payload = String(result.payload ?? '');
  return { status: 'ok', stdout: payload === '' ? '' : `${payload}\n`, exitCode: 0, replayed } satisfies Answer;
}

export async function waitSignal(pass: Pass, request: WaitSignalRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('wait.signal', request.name));
  const call =
    reached.call ??
    (await pass.record(reached, 'call', { deadline: deadlineOf(pass, request.timeoutMs), timeoutMs: request.timeoutMs ?? null }));
  if (reached.result) return signalAnswer(request.name, call.data, reached.result.data, true);
  const { run, store } = pass;
  // Taking the signal and recording it commit together, so a crash can neither lose nor repeat it.
  const taken = await store.transaction(async (tx) => {
    const payload = await tx.takeSignal(run.id, request.name);
    return payload === null ? null : pass.record(reached, 'result', { payload }, tx);
  });
  if (taken) return signalAnswer(request.name, call.data, taken.data, false);
  const deadline = call.data.deadline as string | null;
  if (deadline && pass.host.now().getTime() >= Date.parse(deadline)) {
    const result = await pass.record(reached, 'result', { timedOut: true });
    return signalAnswer(request.name, call.data, result.data, false);
  }
  return pass.suspend({
    awaiting: `signal ${request.name}`,
    wait: { kind: 'signal', name: request.name, ...(deadline ? { deadline } : {}) },
    wakeAt: deadline ? new Date(deadline) : null,
  });
}

function eventAnswer(type: string, call: Record<string, unknown>, result: Record<string, unknown>, replayed: boolean) {
  if (result.timedOut) return timedOut(`wait event ${type}`, call, replayed);
  const event = result.event as { payload?: unknown } | undefined;
  const payload = event?.payload;
  const text = payload === null || payload === undefined ? '' : JSON.stringify(payload);
  return { status: 'ok', stdout: text === '' ? '' : `${text}\n`, exitCode: 0, replayed } satisfies Answer;
}

/** Sees only events that arrive after the wait began, and in a handler's run only its subject's (or none). */
export async function waitEvent(pass: Pass, request: WaitEventRequest): Promise<Answer> {
  const { run, store } = pass;
  const reached = pass.take(pass.peek('wait.event', request.type));
  const call =
    reached.call ??
    (await pass.record(reached, 'call', {
      afterSeq: await store.lastEventSeq(),
      subject: run.subject,
      deadline: deadlineOf(pass, request.timeoutMs),
      timeoutMs: request.timeoutMs ?? null,
    }));
  if (reached.result) return eventAnswer(request.type, call.data, reached.result.data, true);
  const afterSeq = Number(call.data.afterSeq);
  const subject = (call.data.subject as string | null) ?? null;
  const event = await store.findEvent(run.project, request.type, afterSeq, subject);
  if (event) {
    const { id, type, payload } = event;
    const result = await pass.record(reached, 'result', { event: { id, type, subject: event.subject, payload } });
    return eventAnswer(request.type, call.data, result.data, false);
  }
  const deadline = call.data.deadline as string | null;
  if (deadline && pass.host.now().getTime() >= Date.parse(deadline)) {
    const result = await pass.record(reached, 'result', { timedOut: true });
    return eventAnswer(request.type, call.data, result.data, false);
  }
  return pass.suspend({
    awaiting: `event ${request.type}${subject ? ` ${subject}` : ''}`,
    wait: { kind: 'event', type: request.type, subject, afterSeq, ...(deadline ? { deadline } : {}) },
    wakeAt: deadline ? new Date(deadline) : null,
  });
}
