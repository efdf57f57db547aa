import { toApprovers, toField, toRate, toRetry, positiveDuration } from '../pipeline/convert.js';
import type { FormField } from '../pipeline/types.js';
import type { RawFormField } from '../pipeline/raw.js';
import { PipelineProblem, type DocumentPath } from '../pipeline/problem.js';
import type { ExprValue, Graph, GraphNode, NodeType } from './types.js';

/** The document as schema.json accepts it, before convert.ts expands shorthands. */
export interface RawGraph {
  name?: string;
  input?: Record<string, RawInput>;
  nodes: RawNode[];
  outputs?: Record<string, ExprValue>;
}

/** A declared input: a description and a default, and, for a typed form, a form field's type, bounds and options. */
type RawInput = { description?: string; default?: unknown } & Partial<Omit<RawFormField, 'label' | 'default'>>;

interface RawNode {
  id: string;
  type: NodeType;
  config: Record<string, unknown>;
  depends_on?: string[];
  if?: string;
  retry?: number | { attempts: number; backoff?: string };
  timeout?: string;
  fan_out?: {
    items: unknown[] | ExprValue;
    max_parallel?: number;
    rate?: string | { limit: number; period: string };
  };
}

/**
 * Turns a schema-valid document into a Graph: durations to milliseconds, shorthands expanded
 * (retry: 2, rate: 10/1m), and the few things the schema lets through refused: no nodes, two
 * nodes with one id, an empty `expect`, zero durations.
 */
export function toGraph(raw: RawGraph): Graph {
  if (raw.nodes.length === 0) throw new PipelineProblem("'nodes' must list at least one node", ['nodes']);
  const seen = new Map<string, number>();
  raw.nodes.forEach((node, i) => {
    const first = seen.get(node.id);
    if (first !== undefined)
      throw new PipelineProblem(`two nodes have the id '${node.id}' (entries ${first + 1} and ${i + 1}); ids must differ`, ['nodes', i, 'id']);
    seen.set(node.id, i);
  });
  const inputDefaults: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(raw.input ?? {})) if (spec.default !== undefined) inputDefaults[key] = spec.default;
  const inputs = raw.input ?? {};
  return { name: raw.name ?? null, inputDefaults, inputForm: toInputForm(inputs), typedInputs: toTypedInputs(inputs), nodes: raw.nodes.map(toNode), outputs: raw.outputs ?? {} };
}

const FIELD_TYPES = ['string', 'number', 'boolean'];

/** A declared input as a form field, typed by its `type` or else by its default's; null for neither (no type, an object or list default). */
function inputField(name: string, spec: RawInput): FormField | null {
  const type = spec.type ?? typeof spec.default;
  if (!FIELD_TYPES.includes(type)) return null;
  const { description, default: fallback, ...field } = spec;
  return toField(name, { ...field, type: type as RawFormField['type'], ...(description ? { label: description } : {}), ...(fallback === undefined ? {} : { default: fallback as RawFormField['default'] }) }, ['input', name]);
}

/**
 * The form that starts a run (docs/graphs.md): a field per declared input. An input without one
 * makes the whole graph formless, and a person gives its input as JSON.
 */
function toInputForm(inputs: Record<string, RawInput>): FormField[] | null {
  const form = Object.entries(inputs).map(([name, spec]) => inputField(name, spec));
  return form.length > 0 && form.every((field) => field !== null) ? form : null;
}

/** The inputs that declare a `type`, which a submitted run's input is held to (inputs.ts); one typed by its default only is not. */
function toTypedInputs(inputs: Record<string, RawInput>): FormField[] {
  return Object.entries(inputs)
    .filter(([, spec]) => spec.type !== undefined)
    .map(([name, spec]) => inputField(name, spec))
    .filter((field) => field !== null);
}

function toNode(raw: RawNode, index: number): GraphNode {
  const path: DocumentPath = ['nodes', index];
  const expect = raw.config.expect;
  if (raw.type === 'http' && Array.isArray(expect) && expect.length === 0)
    throw new PipelineProblem("'expect' must list at least one status (leave it out for any 2xx)", [...path, 'config', 'expect']);
  // Only an http node's attempts are bounded here; a wait's or an approval's bound is in its config.
  if (raw.timeout !== undefined && raw.type !== 'http')
    throw new PipelineProblem(`'timeout' bounds an http node's attempts; a ${raw.type} node takes none here (a wait or an approval has one in its config)`, [...path, 'timeout']);
  for (const key of ['timeout', 'duration'])
    if (typeof raw.config[key] === 'string') positiveDuration(raw.config[key], [...path, 'config', key]);
  if (raw.type === 'approval' && raw.config.approvers !== undefined)
    toApprovers(raw.config.approvers as { count: number; from: string[] }, [...path, 'config', 'approvers']);
  const fan = raw.fan_out;
  return {
    id: raw.id,
    index,
    type: raw.type,
    config: raw.config,
    dependsOn: raw.depends_on ?? [],
    if: raw.if ?? null,
    retry: raw.retry === undefined ? null : toRetry(raw.retry, [...path, 'retry']),
    timeoutMs: raw.timeout === undefined ? null : positiveDuration(raw.timeout, [...path, 'timeout']),
    fanOut: fan
      ? {
          items: fan.items,
          maxParallel: fan.max_parallel ?? null,
          rate: fan.rate === undefined ? null : toRate(fan.rate, [...path, 'fan_out', 'rate']),
        }
      : null,
  };
}
