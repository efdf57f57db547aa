import { idempotencyKey } from '../../common/ids.js';
import type { PassState as Pass, Reached } from '../pass-state.js';
import type { Answer, DoneRequest, LockRequest, StepFnRequest, StepRequest } from '../protocol.js';
import { bytesField } from '../../common/output-bytes.js';
import { checkResultSize } from '../limits.js';
import { commandAnswer } from './answers.js';

/** Scripts are one job; pipelines (later) give each job its own name here. */
const SCRIPT_JOB = 'main';

export async function step(pass: Pass, request: StepRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('step', request.name));
  if (reached.result) return commandAnswer(reached.result.data, true);
  if (!reached.call) pass.deferCall(reached, request.label ? { label: request.label } : {});
  const stub = pass.host.stubs?.step(request.name) ?? null;
  if (stub) {
    const stdout = 'value' in stub ? (typeof stub.value === 'string' ? stub.value : JSON.stringify(stub.value ?? null)) : stub.stdout;
    const data = { ...bytesField('stdout', Buffer.from(stdout)), exitCode: 'exitCode' in stub ? stub.exitCode : 0 };
    await pass.recordResult(reached, data);
    return commandAnswer(data, false);
  }
  pass.executing.set(reached.position, reached);
  return {
    status: 'execute',
    position: reached.position,
    idempotencyKey: idempotencyKey(pass.run.id, SCRIPT_JOB, request.name, reached.occurrence),
  };
}

/**
 * A function run by an SDK in the script's process: like a step, but what is recorded is the
 * function's JSON value, and a function that raised records nothing (its `done` never comes), so
 * the next pass runs it again.
 */
export async function stepFn(pass: Pass, request: StepFnRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('step_fn', request.name));
  if (reached.result) return { status: 'ok', value: JSON.parse(String(reached.result.data.json ?? 'null')) as unknown, exitCode: 0, replayed: true };
  if (!reached.call) pass.deferCall(reached, {});
  const stub = pass.host.stubs?.step(request.name) ?? null;
  if (stub) {
    const value = 'value' in stub ? stub.value : stub.stdout;
    await pass.recordResult(reached, { json: JSON.stringify(value ?? null) });
    return { status: 'ok', value, exitCode: 0 };
  }
  pass.executing.set(reached.position, reached);
  return {
    status: 'execute',
    position: reached.position,
    idempotencyKey: idempotencyKey(pass.run.id, SCRIPT_JOB, request.name, reached.occurrence),
  };
}

/**
 * `spool lock GROUP` holds the group's lease until the run ends; `spool lock GROUP -- CMD` holds it
 * for the command and records the command's result like a step.
 */
export async function lock(pass: Pass, request: LockRequest): Promise<Answer> {
  const { run, store } = pass;
  const verb = request.command ? 'lock.run' : 'lock';
  const peeked = pass.peek(verb, request.group, (position) => {
    const other = request.command ? null : pass.findRecorded(['lock'], null, position);
    if (other) {
      pass.refuse(
        `this run already holds the lock '${other.name}' (call ${other.position + 1}), and a run takes one bare lock, ` +
          `held until it ends; use 'spool lock GROUP -- CMD' to lock a section`,
      );
    }
  });
  if (peeked.result) {
    pass.take(peeked);
    return request.command ? commandAnswer(peeked.result.data, true) : { status: 'ok', exitCode: 0, replayed: true };
  }
  const reached = pass.take(peeked);
  if (!reached.call) await pass.record(reached, 'call', {});
  const holder = await store.acquireLease(run.project, request.group, run.id);
  if (holder !== run.id) {
    return pass.suspend({ awaiting: `lease ${request.group}`, wait: { kind: 'lease', group: request.group }, wakeAt: null });
  }
  if (!request.command) {
    await pass.record(reached, 'result', { granted: true });
    return { status: 'ok', exitCode: 0 };
  }
  pass.executing.set(reached.position, reached);
  return {
    status: 'execute',
    position: reached.position,
    idempotencyKey: idempotencyKey(run.id, SCRIPT_JOB, `lock:${request.group}`, reached.occurrence),
  };
}

/** The result of a command the client ran for a step or a locked section, or of a step_fn's function. */
export async function done(pass: Pass, request: DoneRequest): Promise<Answer> {
  const reached = pass.executing.get(request.position);
  if (!reached) pass.refuse(`no call at position ${request.position} is waiting for its result`);
  if (reached.verb === 'step_fn') return doneFn(pass, reached, request);
  if ('value' in request) pass.refuse(`step '${reached.name}' ran a command: its done takes stdout and exitCode`);
  pass.executing.delete(request.position);
  const what = reached.verb === 'lock.run' ? `the command locked by '${reached.name}'` : `step '${reached.name}'`;
  const stdout = 'stdoutBase64' in request ? Buffer.from(request.stdoutBase64, 'base64') : Buffer.from(request.stdout);
  checkResultSize(what, stdout, pass.host.maxResultBytes);
  // Kept as sent, so a replay gives back the very bytes (base64 where they are not plain text).
  // A failed command's stderr tail goes beside them, for people (commandAnswer never returns it).
  const tail = request.exitCode !== 0 && 'stderrTail' in request && request.stderrTail ? { stderrTail: request.stderrTail } : {};
  const result = { ...bytesField('stdout', stdout), exitCode: request.exitCode, ...tail };
  if (reached.verb !== 'lock.run') {
    await pass.recordResult(reached, result);
    return { status: 'ok', exitCode: request.exitCode };
  }
  const { run } = pass;
  const next = await pass.store.transaction(async (tx) => {
    await pass.record(reached, 'result', result, tx);
    return tx.releaseLease(run.project, reached.name, run.id);
  });
  if (next) pass.host.notify({ kind: 'lease-holder', runId: next });
  return { status: 'ok', exitCode: request.exitCode };
}

async function doneFn(pass: Pass, reached: Reached, request: DoneRequest): Promise<Answer> {
  if (!('value' in request)) pass.refuse(`step_fn '${reached.name}' ran a function: its done takes the function's value`);
  pass.executing.delete(request.position);
  // Kept as JSON text: a jsonb column would reorder an object's keys, and a replay must give the
  // script back the very value its first pass had.
  const json = JSON.stringify(request.value ?? null);
  checkResultSize(`step_fn '${reached.name}'`, json, pass.host.maxResultBytes);
  await pass.recordResult(reached, { json });
  return { status: 'ok', exitCode: 0 };
}
