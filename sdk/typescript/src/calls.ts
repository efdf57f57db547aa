import { readFileSync } from 'node:fs';
import { jsonOrText, ok, text } from './answers.js';
import { send } from './connection.js';
import { ScriptError, StepFailed } from './errors.js';
import { asJson, asStoredText } from './json.js';

export interface EmitOptions {
  /** Any JSON value; handlers and waits receive it parsed. */
  payload?: unknown;
  /** What the event is about (a customer, an order): waits and handlers can be keyed on it. */
  subject?: string;
}

/** Emits an event, durably (a replay does not emit it again); returns the event's id. */
export async function emit(type: string, options: EmitOptions = {}): Promise<string> {
  const payload = options.payload === undefined ? {} : { payload: asJson(options.payload, `emit '${type}'`) };
  const subject = options.subject === undefined ? {} : { subject: options.subject };
  return text(await ok(await send({ verb: 'event.emit', type, ...subject, ...payload })));
}

export type SpawnKind = 'script' | 'pipeline';

export interface SpawnOptions {
  /** The child run's input (any JSON value). */
  input?: unknown;
  /** The child's file name; its extension picks the interpreter as `spool submit` does. */
  name?: string;
}

/** The interpreter each script extension picks, as the agent's own table has it. */
const INTERPRETERS: Record<string, string> = {
  sh: 'bash -eu',
  bash: 'bash -eu',
  py: 'python3',
  mjs: 'node',
  js: 'node',
  cjs: 'node',
  yaml: 'pipeline',
  yml: 'pipeline',
};

function childFile(kind: SpawnKind, name: string | undefined): { workflow: string; interpreter: string } {
  if (kind !== 'script' && kind !== 'pipeline') {
    throw new ScriptError('usage', `spawn takes 'script' or 'pipeline' as its kind, not '${String(kind)}'`);
  }
  const workflow = name ?? (kind === 'script' ? 'child.sh' : 'child.yaml');
  const extension = /\.([^./]+)$/.exec(workflow)?.[1]?.toLowerCase() ?? '';
  const interpreter = INTERPRETERS[extension];
  if (interpreter === undefined || (interpreter === 'pipeline') !== (kind === 'pipeline')) {
    const wanted = kind === 'pipeline' ? '.yaml or .yml' : Object.keys(INTERPRETERS).filter((e) => !e.startsWith('y')).map((e) => `.${e}`).join(', ');
    throw new ScriptError('usage', `spawn '${workflow}': a ${kind} is named with ${wanted}`);
  }
  return { workflow, interpreter };
}

/**
 * Starts a child run of `text` (a script, run by bash unless `name` picks another interpreter, or a
 * YAML pipeline) without waiting for it; returns the child's run id.
 */
export async function spawn(kind: SpawnKind, source: string, options: SpawnOptions = {}): Promise<string> {
  const child = childFile(kind, options.name);
  const input = options.input === undefined ? {} : { input: asJson(options.input, `spawn '${child.workflow}'`) };
  return text(await ok(await send({ verb: 'spawn', ...child, script: source, ...input })));
}

/**
 * Runs one graph node kind (`http`, `script`, `call`, `approval`, `wait`, `sleep`; docs/graphs.md)
 * as durable calls of this run and returns its output, as `spool call-node` does. Any value in
 * `config` may be `{ $expr: '...' }` over `input` and `node` (`node.idempotency_key` is this
 * call's). A failed node throws StepFailed.
 */
export async function callNode(type: string, config: Record<string, unknown>, options: { name?: string } = {}): Promise<unknown> {
  const label = options.name ?? type;
  const name = options.name === undefined ? {} : { name: options.name };
  const answer = await ok(await send({ verb: 'call.node', type, config: asJson(config, `call_node '${label}'`), ...name }));
  const output = text(answer);
  if ((answer.exitCode ?? 0) !== 0) throw new StepFailed(label, answer.exitCode ?? 1, output, answer.stderr);
  return output === '' ? null : (JSON.parse(output) as unknown);
}

/**
 * Runs the graph document at `path` as a child run, waits for it and returns its outputs (JSON
 * values parsed), as `spool call-graph` does. The file is read now; a replayed call needs none (a
 * new one whose file cannot be read is refused). A failed graph throws StepFailed.
 */
export async function callGraph(path: string, options: { input?: unknown } = {}): Promise<Record<string, unknown>> {
  let script = '';
  let unreadable: { unreadable: string } | Record<string, never> = {};
  try {
    script = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(path));
  } catch (error) {
    unreadable = { unreadable: `call_graph: cannot read ${path}: ${(error as Error).message}` };
  }
  const input = options.input === undefined ? {} : { input: asJson(options.input, `call_graph '${path}'`) };
  const answer = await ok(await send({ verb: 'call', workflow: path, script, interpreter: 'graph', ...input, ...unreadable }));
  const output = text(answer);
  if ((answer.exitCode ?? 0) !== 0) throw new StepFailed(path, answer.exitCode ?? 1, output, answer.stderr);
  const outputs = (output === '' ? {} : JSON.parse(output)) as Record<string, string>;
  return Object.fromEntries(Object.entries(outputs).map(([key, value]) => [key, jsonOrText(value)]));
}

/** Sets one of this run's outputs: a string as it is, any other value as its JSON. */
export async function outputSet(key: string, value: unknown): Promise<void> {
  await ok(await send({ verb: 'output.set', key, value: asStoredText(value, `output_set '${key}'`) }));
}

/** Adds a note to this run's timeline. */
export async function annotate(note: string): Promise<void> {
  await ok(await send({ verb: 'annotate', text: note }));
}
