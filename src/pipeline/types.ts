/** A pipeline document after validation (see schema.json and docs/pipelines.md). */

export type ConcurrencyPolicy = 'queue' | 'cancel-running' | 'skip';

export const CONCURRENCY_POLICIES: readonly ConcurrencyPolicy[] = ['queue', 'cancel-running', 'skip'];

export interface Concurrency {
  /** May hold `${{ }}` expressions over `input`. */
  group: string;
  /** A policy, or `${{ }}` over `input` yielding one, read at submit (admission.ts). */
  policy: string;
}

export interface ThrottleSpec {
  limit: number;
  periodMs: number;
  /** May hold `${{ }}` expressions over `input`; default: the pipeline name. */
  key: string;
  /** How many runs may start together after a quiet spell (default 1). */
  burst: number;
  /** queue (default): wait for a slot; drop: refuse runs over the rate. */
  policy: 'queue' | 'drop';
}

export interface Step {
  name: string;
  /** A shell command; may hold `${{ }}` expressions. */
  run: string;
}

export interface Retry {
  /** Attempts in all, counting the first. */
  attempts: number;
  backoffMs: number;
}

/** A field of an approval's form; its value becomes an output of the gate's job. */
export interface FormField {
  name: string;
  type: 'string' | 'number' | 'boolean';
  /** What the form shows; the name when the document gives none. */
  label: string;
  required: boolean;
  default: string | number | boolean | null;
  /** The values a string field may take. */
  options: string[] | null;
  /** The bounds of a number field, each included; null where it has none. */
  min: number | null;
  max: number | null;
}

/** Where a gate posts its prompt with buttons, and who may answer from there. */
export interface ChatNotify {
  slack?: string;
  mattermost?: string;
  /** Names of people in the server's chat settings; left out: anyone mapped there. */
  answerers?: string[];
}

/**
 * A gate that asks several people: it opens at the `count`th approval from distinct people named in
 * `from` (a user name, or `group:<name>` for anyone whose identity carries that group), closes at the
 * first rejection, and refuses the run's submitter.
 */
export interface Approvers {
  count: number;
  from: string[];
}

export interface Approval {
  prompt: string;
  /**
   * How long the gate waits: a duration checked at parse time, or text with `${{ }}` that must
   * yield one when the gate opens (gateTimeoutMs). Null: for ever.
   */
  timeout: string | null;
  /** Empty when the gate asks only Approve or Reject. */
  form: FormField[];
  notify: ChatNotify | null;
  /** Null: one answer from anyone who may answer decides (the single-approver gate). */
  approvers: Approvers | null;
}

export interface FanOut {
  /** A literal list, or one `${{ }}` expression that yields a list (at most 100 items). */
  items: unknown[] | string;
  maxParallel: number | null;
  /** Starts at most `limit` items per `periodMs`. */
  rate: { limit: number; periodMs: number } | null;
  /** Each item runs these steps (`${{ item }}` is the item)... */
  steps: Step[] | null;
  /** ...or starts one child run of this workflow file per item, with the item as its input. */
  workflow: string | null;
}

export interface Job {
  name: string;
  dependsOn: string[];
  /** The `${{ }}` condition, if any. */
  if: string | null;
  steps: Step[] | null;
  /** A script with durable calls (bash). */
  script: string | null;
  approval: Approval | null;
  fanOut: FanOut | null;
  retry: Retry | null;
  concurrency: Concurrency | null;
}

export interface Pipeline {
  name: string;
  concurrency: Concurrency | null;
  throttle: ThrottleSpec | null;
  /** In document order. */
  jobs: Job[];
  /** The run's outputs, each a text with `${{ }}`, read once every job has ended. */
  outputs: Record<string, string>;
}

/**
 * What expressions can see: `input.*`, `steps.<job>.output.*`, and `item` inside a fan_out; in a
 * graph (docs/graphs.md), `nodes.<id>`, `node.id`, `node.idempotency_key` and `index` too.
 */
export interface ExpressionScope {
  input: unknown;
  steps: Record<string, { output: Record<string, unknown>; status?: string }>;
  item?: unknown;
  nodes?: Record<string, { output: unknown; status: string }>;
  node?: { id: string; idempotency_key: string };
  index?: number;
}
