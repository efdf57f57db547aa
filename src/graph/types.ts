/** A graph document after validation (see schema.json and docs/graphs.md). */
import type { FormField, Retry } from '../pipeline/types.js';

export const NODE_TYPES = ['http', 'script', 'call', 'approval', 'wait', 'sleep'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** `{"$expr": "..."}`: a value computed when the node runs. */
export interface ExprValue {
  $expr: string;
}

export interface GraphFanOut {
  /** A literal list, or one $expr that yields a list (at most 100 items). */
  items: unknown[] | ExprValue;
  maxParallel: number | null;
  /** Starts at most `limit` items per `periodMs`. */
  rate: { limit: number; periodMs: number } | null;
}

export interface GraphNode {
  id: string;
  /** Where the node is in the document's `nodes` list, for pointing at it. */
  index: number;
  type: NodeType;
  /** As written: any value may be an ExprValue, read when the node runs. */
  config: Record<string, unknown>;
  dependsOn: string[];
  /** An expression, bare or in `${{ }}`. */
  if: string | null;
  retry: Retry | null;
  timeoutMs: number | null;
  fanOut: GraphFanOut | null;
}

export interface Graph {
  name: string | null;
  /** Declared inputs' defaults, used where the run's input leaves a key out. */
  inputDefaults: Record<string, unknown>;
  /** The typed form its declared inputs make (convert.ts), or null: its input is given as JSON. */
  inputForm: FormField[] | null;
  /** The declared inputs that give a `type` explicitly: a submitted run's input must fit them (inputs.ts). */
  typedInputs: FormField[];
  /** In document order. */
  nodes: GraphNode[];
  outputs: Record<string, ExprValue>;
}
