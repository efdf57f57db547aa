import { resolve as resolvePath } from 'node:path';
import { parseDuration } from '../common/duration.js';
import { UsageError, ensureError } from '../common/errors.js';
import { idempotencyKey } from '../common/ids.js';
import { readTextFile } from '../common/text-file.js';
import { interpreterOf } from '../common/workflow-file.js';
import type { ChildRequest } from '../engine/protocol.js';
import { approvalScript, gateInput, gateOutputs } from '../pipeline/job-scripts.js';
import { pinnedBody } from '../pipeline/pinned-bodies.js';
import type { Approvers, ExpressionScope, Retry } from '../pipeline/types.js';
import { resolve } from './expressions.js';
import { httpNode } from './http-node.js';
import { callOk, type NodeHost, type NodeResult, type OkAnswer } from './node-host.js';
import type { NodeType } from './types.js';

/** One node kind with its config as written (any value may be an $expr): what `runNode` runs. */
export interface NodeSpec {
  id: string;
  type: NodeType;
  config: Record<string, unknown>;
  retry: Retry | null;
  timeoutMs: number | null;
}

/** The interpreter a script node's body runs in, as recorded for its child run. */
const SCRIPT_INTERPRETERS: Record<string, string> = { bash: 'bash -eu', python: 'python3', node: 'node' };

/**
 * `node.idempotency_key`: made from the run, the node and the fan_out item, as a step's
 * $SPOOL_IDEMPOTENCY_KEY is (common/ids.ts), so it is the same on every attempt, replay and
 * re-dispatch of one node of one run, differs per item, and is new in a new run.
 */
export function nodeKey(runId: string, nodeId: string, index?: number): string {
  return idempotencyKey(runId, 'graph', nodeId, 0, index);
}

/** What a node's expressions see: the graph's scope, the node itself and, in a fan_out, the item. */
export function nodeScope(scope: ExpressionScope, runId: string, nodeId: string, item?: { item: unknown; index: number }): ExpressionScope {
  const node = { id: nodeId, idempotency_key: nodeKey(runId, nodeId, item?.index) };
  return item ? { ...scope, node, item: item.item, index: item.index } : { ...scope, node };
}

const failed = (error: string, output: unknown = null): NodeResult => ({ status: 'failed', output, error });

/**
 * Runs one node (or one item of a fan_out, `index`) as durable calls of the host's run, its config
 * read in `scope` (nodeScope). What a graph's runner does for each node, and what a script's
 * `spool call-node` can do for one.
 */
/** `beforeSend`: what an http node awaits before it sends its request (a fan_out's rate). */
export async function runNode(host: NodeHost, spec: NodeSpec, scope: ExpressionScope, index?: number, beforeSend?: () => Promise<void>): Promise<NodeResult> {
  const name = index === undefined ? spec.id : `${spec.id}[${index}]`;
  const config = resolve(spec.config, scope) as Record<string, unknown>;
  try {
    switch (spec.type) {
      case 'http':
        return await httpNode(host, name, config, spec.retry, spec.timeoutMs, beforeSend);
      case 'sleep':
        await callOk(host, { verb: 'sleep', ms: parseDuration(String(config.duration)) });
        return { status: 'succeeded', output: null, error: null };
      case 'wait':
        return await waitNode(host, config);
      case 'approval':
        return await approvalNode(host, name, config, scope);
      case 'script':
      case 'call': {
        const type = spec.type;
        return await withRetry(host, spec.retry, () => childNode(host, name, type, config, scope));
      }
    }
  } catch (error) {
    // A value an $expr gave that the node cannot take (a duration that is none): the node fails, saying so.
    if (error instanceof UsageError) return failed(`node ${name}: ${error.message}`);
    throw error;
  }
}

/** A value sent as text (a signal's payload, a child's output) as the JSON it holds, if it holds one. */
function typed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A signal or an event, waited for at most `timeout`: its payload, or timed_out. */
async function waitNode(host: NodeHost, config: Record<string, unknown>): Promise<NodeResult> {
  const timeoutMs = parseDuration(String(config.timeout));
  const answer =
    config.signal !== undefined
      ? await callOk(host, { verb: 'wait.signal', name: String(config.signal), timeoutMs })
      : await callOk(host, { verb: 'wait.event', type: String(config.event), timeoutMs });
  if (answer.exitCode === 124) return { status: 'succeeded', output: { timed_out: true, payload: null }, error: null };
  const payload = (answer.stdout ?? '').replace(/\n$/, '');
  return { status: 'succeeded', output: { timed_out: false, payload: payload === '' ? null : typed(payload) }, error: null };
}

/** A child run's outputs (text, as `spool output set` leaves them) as values, JSON ones parsed. */
function childOutputs(answer: OkAnswer): Record<string, unknown> {
  const outputs = (answer.stdout ? JSON.parse(answer.stdout) : {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(outputs).map(([key, value]) => [key, typed(value)]));
}

/** A pipeline's approval gate, as a child run the approvals API and the run page know (`<workflow>#<node>`). */
async function approvalNode(host: NodeHost, name: string, config: Record<string, unknown>, scope: ExpressionScope): Promise<NodeResult> {
  const timeoutMs = typeof config.timeout === 'string' ? parseDuration(config.timeout) : null;
  // The schema and convert.ts checked approvers at parse time.
  const approval = { prompt: String(config.prompt), timeout: null, form: [], notify: null, approvers: (config.approvers as Approvers | undefined) ?? null };
  const job = { name };
  const answer = await callOk(host, {
    verb: 'call',
    workflow: `${host.run.workflow}#${name}`,
    script: approvalScript(host.run.id, job, approval, scope, timeoutMs),
    interpreter: 'bash -eu',
    input: gateInput(job, approval, scope, timeoutMs),
  });
  if (answer.exitCode !== 0) return failed(answer.stderr ?? `approval ${name} failed`);
  return { status: 'succeeded', output: gateOutputs(childOutputs(answer)), error: null };
}

/** A script body, or a stored Workflow or a file, as a child run with its own durable calls; its outputs are the node's. */
async function childNode(host: NodeHost, name: string, type: 'script' | 'call', config: Record<string, unknown>, scope: ExpressionScope): Promise<NodeResult> {
  const workflow = `${host.run.workflow}#${name}`;
  const input = config.input === undefined ? scope.input : config.input;
  let request: ChildRequest;
  if (type === 'script') {
    request = { verb: 'call', workflow, script: String(config.body), interpreter: SCRIPT_INTERPRETERS[String(config.interpreter)] ?? 'bash -eu', input };
  } else {
    const target = String(config.workflow);
    const body = pinnedBody(host.run.runner, target);
    if (body) {
      request = { verb: 'call', workflow, script: body.script, interpreter: body.interpreter, input, body: target };
    } else if (host.host.noWorkflowFiles) {
      return failed(`call ${target}: ${host.host.noWorkflowFiles}`);
    } else {
      const file = resolvePath(host.run.cwd ?? '.', target);
      let script: string;
      try {
        script = readTextFile(file);
      } catch (error) {
        return failed(`call ${target}: ${ensureError(error).message}`);
      }
      request = { verb: 'call', workflow, script, interpreter: interpreterOf(file, script), input };
    }
  }
  const answer = await callOk(host, request);
  if (answer.exitCode !== 0) return failed(answer.stderr ?? `child run of ${name} failed`, childOutputs(answer));
  return { status: 'succeeded', output: childOutputs(answer), error: null };
}

/** A child node's retries: each attempt a new child run, after a durable sleep of the backoff, doubling. */
async function withRetry(host: NodeHost, retry: Retry | null, attempt: () => Promise<NodeResult>): Promise<NodeResult> {
  const attempts = retry?.attempts ?? 1;
  let result = await attempt();
  for (let n = 1; n < attempts && result.status === 'failed'; n++) {
    await callOk(host, { verb: 'sleep', ms: (retry?.backoffMs ?? 0) * 2 ** (n - 1) });
    result = await attempt();
  }
  return result;
}
