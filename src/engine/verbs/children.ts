import { DeterminismError, UsageError } from '../../common/errors.js';
import { derivedRunId, stableHash } from '../../common/ids.js';
import { TERMINAL_STATUSES, type RunnerSettings } from '../../store/types.js';
import { pinnedBody } from '../../pipeline/pinned-bodies.js';
import { GRAPH, PIPELINE, documentKind, runsInProcess } from '../../common/workflow-file.js';
import { checkDocument } from '../../workflow-file/check.js';
import type { PassState as Pass, Reached } from '../pass-state.js';
import type { AnnotateRequest, Answer, ChildRequest, EmitRequest, OutputRequest, WaitChildrenRequest } from '../protocol.js';
import { EXIT } from '../protocol.js';
import { OK, textAnswer } from './answers.js';

export async function emit(pass: Pass, request: EmitRequest): Promise<Answer> {
  const { run, store } = pass;
  const reached = pass.take(pass.peek('event.emit', ''));
  if (reached.result) return textAnswer(String(reached.result.data.eventId), true);
  // The id comes from the call site, so a pass that repeats this call emits the same event.
  const id = `evt-${stableHash(run.id, reached.position)}`;
  await store.transaction(async (tx) => {
    if (!reached.call) await pass.record(reached, 'call', { type: request.type }, tx);
    await tx.emitEvent({ id, project: run.project, type: request.type, subject: request.subject ?? null, payload: request.payload ?? null });
    await pass.record(reached, 'result', { eventId: id }, tx);
  });
  pass.host.notify({ kind: 'event', project: run.project, type: request.type, id });
  return textAnswer(id);
}

/** The pod settings of a pinned fan_out body: its own Workflow's, not the parent's. */
function childRunner(runner: RunnerSettings | null, name: string): RunnerSettings | null {
  const body = pinnedBody(runner, name);
  if (!body) throw new UsageError(`no fan_out body ${name} was pinned with this run`);
  return body.runner ?? null;
}

/**
 * What a child runs in: a document (a pipeline or a graph, whichever the client or SDK called it) is
 * told by its content here, as `spool run` tells it, so every client and SDK starts the same run.
 */
const childInterpreter = (request: Child): string =>
  runsInProcess(request) ? (documentKind(request.script) === 'graph' ? GRAPH : PIPELINE) : request.interpreter;

/**
 * A child as it will run: its file's, or a stored Workflow's source with its own pod settings;
 * `calledAs` is what the script named, recorded with the call.
 */
type Child = ChildRequest & { interpreter: string; calledAs: string; runner?: RunnerSettings | null };

async function startChild(pass: Pass, reached: Reached, request: Child): Promise<string> {
  const { run, store } = pass;
  const childId = derivedRunId(pass.host.env, run.project, run.id, String(reached.position));
  await store.transaction(async (tx) => {
    await tx.createRun({
      id: childId,
      project: run.project,
      workflow: request.workflow,
      interpreter: childInterpreter(request),
      script: request.script,
      input: request.input ?? null,
      parentId: run.id,
      cwd: run.cwd,
      runner: request.runner !== undefined ? request.runner : request.body === undefined ? run.runner : childRunner(run.runner, request.body),
      lenient: run.lenient,
    });
    await pass.record(reached, 'call', { runId: childId, workflow: request.calledAs }, tx);
  });
  pass.host.notify({ kind: 'run-created', runId: childId });
  return childId;
}

/**
 * A new child is refused, before the journal has a say and the same way on every pass, when the
 * client could not read its file or a document in it is not valid; a recorded one needs neither
 * (a new pod has none of the files the last pass made). Where workflows are stored by name (a
 * cluster), a name the pod has no file of is that Workflow, read now and kept with the child.
 */
async function childToStart(pass: Pass, request: ChildRequest): Promise<Child> {
  const { interpreter = '' } = request;
  let child: Child = { ...request, interpreter, calledAs: request.workflow };
  // Children are all recorded under one name: the next recorded one is this call's only if it is of
  // this workflow. Another's is a later call's, which a call refused on an earlier pass (it took no
  // position) now precedes: this call is new.
  const recorded = pass.recordedCall(request.verb, '')?.data.workflow ?? null;
  if (recorded === request.workflow) return child;
  if (request.unreadable === undefined && !interpreter) pass.refuse(`spool ${request.verb}: the request names no interpreter for ${request.workflow}`);
  if (request.unreadable !== undefined) {
    const byName = pass.host.storedWorkflow;
    const stored = byName ? await byName(pass.run.project, request.workflow) : null;
    if (stored === null) pass.refuse(`${request.unreadable}${byName ? `, and there is no Workflow ${request.workflow} in namespace ${pass.run.project}` : ''}`);
    if ('refusal' in stored) pass.refuse(`spool ${request.verb}: Workflow ${request.workflow}: ${stored.refusal}`);
    child = { ...child, workflow: stored.workflow, script: stored.script, interpreter: stored.interpreter, runner: stored.runner ?? null };
    delete child.unreadable;
  }
  // An SDK's call_graph sends 'graph': a pipeline (or anything else) is refused, as spool call-graph refuses it.
  if (child.interpreter === GRAPH && documentKind(child.script) !== 'graph') {
    pass.refuse(`call_graph: ${request.workflow} is not a graph (a .json, .yaml or .yml document whose top level has nodes)`);
  }
  if (runsInProcess(child)) {
    try {
      checkDocument(child.workflow, child.script);
    } catch (error) {
      pass.refuse(`spool ${request.verb}: ${(error as Error).message}`);
    }
  }
  if (recorded !== null && !pass.lenient) {
    throw new DeterminismError(
      `determinism error at call ${pass.nextPosition + 1}: the journal recorded \`${request.verb} ${String(recorded)}\` there, but this pass reached \`${request.verb} ${request.workflow}\`; ` +
        'replay must reach the same durable calls in the same order (run with --lenient to switch this check off)',
    );
  }
  return child;
}

export async function spawn(pass: Pass, request: ChildRequest): Promise<Answer> {
  const child = await childToStart(pass, request);
  const reached = pass.take(pass.peek('spawn', ''));
  if (reached.result) return textAnswer(String(reached.result.data.runId), true);
  const childId = reached.call ? String(reached.call.data.runId) : await startChild(pass, reached, child);
  await pass.record(reached, 'result', { runId: childId });
  return textAnswer(childId);
}

function childAnswer(data: Record<string, unknown>, replayed: boolean): Answer {
  const outputs = (data.outputs as Record<string, string> | undefined) ?? {};
  const stdout = Object.keys(outputs).length > 0 ? `${JSON.stringify(outputs)}\n` : '';
  if (data.status === 'succeeded') return { status: 'ok', stdout, exitCode: 0, replayed };
  return {
    status: 'ok',
    stdout,
    exitCode: EXIT.failure,
    stderr: `spool: child run ${String(data.runId)} ${String(data.status)}${data.error ? `: ${String(data.error)}` : ''}`,
    replayed,
  };
}

/** Starts a child run and waits for it, holding no process. */
export async function call(pass: Pass, request: ChildRequest): Promise<Answer> {
  const toStart = await childToStart(pass, request);
  const reached = pass.take(pass.peek('call', ''));
  if (reached.result) return childAnswer(reached.result.data, true);
  const childId = reached.call ? String(reached.call.data.runId) : await startChild(pass, reached, toStart);
  const child = await pass.store.getRun(childId);
  if (child && TERMINAL_STATUSES.includes(child.status)) {
    const result = { runId: childId, status: child.status, outputs: child.outputs, error: child.error };
    return childAnswer((await pass.record(reached, 'result', result)).data, false);
  }
  return pass.suspend({ awaiting: `child ${childId}`, wait: { kind: 'child', runId: childId }, wakeAt: null });
}

/** Longest tail of a child's log a wait records with its result. */
const LOG_TAIL = 64 * 1024;

/**
 * Waits for the first of several children to end and records which (the earliest to finish), so
 * a replay sees the same order of endings whatever happened since.
 */
export async function waitChildren(pass: Pass, request: WaitChildrenRequest): Promise<Answer> {
  const { store } = pass;
  const reached = pass.take(pass.peek('wait.children', ''));
  if (reached.result) return { status: 'ok', stdout: JSON.stringify(reached.result.data), exitCode: 0, replayed: true };
  if (!reached.call) await pass.record(reached, 'call', { runIds: request.runIds });
  const ended = [];
  for (const id of request.runIds) {
    const child = await store.getRun(id);
    if (child && TERMINAL_STATUSES.includes(child.status)) ended.push(child);
  }
  ended.sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0) || a.id.localeCompare(b.id));
  const first = ended[0];
  if (!first) {
    return pass.suspend({ awaiting: request.awaiting ?? `child ${request.runIds.join(', ')}`, wait: { kind: 'children', runIds: request.runIds }, wakeAt: null });
  }
  const log = (await store.readLogs(first.id)).map((line) => line.text).join('').slice(-LOG_TAIL);
  const result = { runId: first.id, status: first.status, outputs: first.outputs, error: first.error, log };
  await pass.record(reached, 'result', result);
  return { status: 'ok', stdout: JSON.stringify(result), exitCode: 0 };
}

export async function setOutput(pass: Pass, request: OutputRequest): Promise<Answer> {
  const { run, store } = pass;
  const reached = pass.take(pass.peek('output.set', request.key));
  if (reached.result) return { ...OK, replayed: true };
  await store.transaction(async (tx) => {
    const current = await tx.getRun(run.id);
    await tx.updateRun(run.id, { outputs: { ...current?.outputs, [request.key]: request.value } });
    if (!reached.call) await pass.record(reached, 'call', { value: request.value }, tx);
    await pass.record(reached, 'result', {}, tx);
  });
  return OK;
}

export async function annotate(pass: Pass, request: AnnotateRequest): Promise<Answer> {
  const reached = pass.take(pass.peek('annotate', ''));
  if (reached.result) return { ...OK, replayed: true };
  await store(pass, reached, request.text);
  return OK;
}

async function store(pass: Pass, reached: Reached, text: string): Promise<void> {
  await pass.store.transaction(async (tx) => {
    if (!reached.call) await pass.record(reached, 'call', { text }, tx);
    await pass.record(reached, 'result', {}, tx);
  });
}
