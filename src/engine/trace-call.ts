import type { CallEnd, CallSpan, PassTrace } from '../tracing/tracing.js';
import type { PassState } from './pass-state.js';
import type { Answer, Request } from './protocol.js';

// How a pass's durable calls become spans (docs/tracing.md), kept apart from what the calls do:
// a call's span covers it from its request to its answer, or, for a command the client runs (a
// step, a locked section, a step_fn's function, an artifact's upload), to its `done` or `commit`.

/** The verbs whose command runs in the script's environment, where `traceparent` reaches it. */
const COMMANDS = new Set(['step', 'lock.run']);

/** Spans open while their command runs, by pass and position. */
const running = new WeakMap<PassTrace, Map<number, CallSpan>>();

function runningOf(trace: PassTrace): Map<number, CallSpan> {
  let spans = running.get(trace);
  if (!spans) running.set(trace, (spans = new Map<number, CallSpan>()));
  return spans;
}

function endOf(answer: Answer): CallEnd {
  switch (answer.status) {
    case 'suspended':
      return { outcome: 'suspended', detail: answer.message.replace(/^script suspended awaiting /, '') };
    case 'error':
      return { outcome: 'error', exitCode: answer.exitCode, detail: answer.message };
    default:
      return { outcome: 'ok', exitCode: answer.status === 'ok' ? (answer.exitCode ?? 0) : 0 };
  }
}

/**
 * Answers a request as `answer` does and makes its span. A call answered from the journal makes
 * none (the pass that made it sent one; N passes would otherwise show it N times): the pass's
 * span counts them. A refused call, or a live one (`state get`), takes no position and makes none.
 */
export async function traceCall(pass: PassState, trace: PassTrace, request: Request, answer: () => Promise<Answer>): Promise<Answer> {
  if (request.verb === 'done' || request.verb === 'artifact.commit') {
    const result = await answer();
    const span = runningOf(trace).get(request.position);
    // A done refused as malformed leaves the command's call waiting for a proper one.
    if (span && !(result.status === 'error' && result.kind === 'usage')) {
      runningOf(trace).delete(request.position);
      span.end(endOf(result));
    }
    return result;
  }
  const position = pass.nextPosition;
  const replayed = pass.answeredNext;
  // Recorded by an earlier pass, finished by this one: a wait that ends now, a step cut off before.
  const resumed = pass.replaying && !replayed;
  const start = new Date();
  const result = await answer();
  if (pass.nextPosition === position) return result;
  if (replayed) {
    trace.replayed();
    return result;
  }
  const call = pass.recordedAt(position);
  const verb = call?.verb ?? request.verb;
  const span = trace.call({ verb, name: call?.name ?? '', position, resumed, start });
  if (result.status !== 'execute') {
    span.end(endOf(result));
    return result;
  }
  runningOf(trace).set(position, span);
  return COMMANDS.has(verb) ? { ...result, traceparent: span.traceparent } : result;
}
