import type { Random } from './random.js';

/**
 * One durable call (or a call the script makes and catches) of a generated workflow. Each op writes
 * what the script saw, per pass, to `$VERIFY_OUT/<id>.<pass>` (bytes) and `<id>.<pass>.code` (its
 * exit status): outside the working directory, which is new and empty on every pass.
 */
export type Op =
  /** A step whose body prints `payload` then a 16-hex nonce (a body run twice prints another). */
  | { kind: 'step'; id: string; payload: Buffer; exit: number }
  /** The script's own stdout, not recorded: it goes to the run's log. */
  | { kind: 'print'; id: string; payload: Buffer }
  /** A step makes a file in the working directory, a put stores it, the file is removed. */
  | { kind: 'put-file'; id: string; payload: Buffer }
  | { kind: 'put-stdin'; id: string; payload: Buffer }
  /** A put over SPOOL_MAX_ARTIFACT_BYTES, caught: refused on every pass, recorded on none. */
  | { kind: 'refused-put'; id: string; from: 'file' | 'stdin' }
  /** `state incr` of a cell that holds text, caught: refused on every pass, recorded on none. */
  | { kind: 'refused-incr'; id: string }
  | { kind: 'incr'; id: string; by: number }
  | { kind: 'claim'; id: string }
  | { kind: 'sleep'; id: string; ms: number }
  /** A bounded wait nothing answers: it times out (124), recorded. */
  | { kind: 'wait-timeout'; id: string }
  /**
   * `spool wait signal <id>`, which the harness answers from outside (deliveries.ts) with `payload`,
   * by `spool signal` (text) or the HTTP API (a JSON object, which the wait prints as its JSON),
   * then sends the same signal again with `second`, which this wait must not take.
   */
  | { kind: 'wait-signal'; id: string; payload: string; second: string; via: 'cli' | 'api'; when: SignalWhen }
  /** `spool wait event <id>-type`, which the harness answers with `spool event emit --key --payload` once it waits. */
  | { kind: 'wait-event'; id: string; payload: Record<string, unknown>; key: string; when: EventWhen }
  | { kind: 'emit'; id: string }
  | { kind: 'lock'; id: string; payload: Buffer }
  /** A child run of a file a step makes: a replayed call has no file (the step did not run again). */
  | { kind: 'call'; id: string }
  /** An http node (`spool call-node`) to the harness's key server at `$VERIFY_HTTP/<id>`, keyed by node.idempotency_key. */
  | { kind: 'call-node'; id: string }
  /** A graph (CHILD_GRAPH) a step copies into the working directory, run as a child by `spool call-graph`. */
  | { kind: 'call-graph'; id: string }
  /**
   * `spool activity run <id>`, whose command prints `payload`: its id, a NUL and a byte that is not
   * UTF-8 (made from the id, not drawn, so saved seeds make the workflows they made before).
   */
  | { kind: 'activity'; id: string; payload: Buffer }
  /**
   * `spool activity submit <id>` of a command that writes `payload` (a NUL and a byte that is not
   * UTF-8 in it) to stderr and exits 3, then `spool activity wait --all`: exit 1 on every pass, and
   * its result keeps `<id>: ` and the payload's line as text.
   */
  | { kind: 'activity-all'; id: string; payload: Buffer }
  /** `spool checkout` of the bundle the run was started with. */
  | { kind: 'checkout'; id: string };

export type OpKind = Op['kind'];

/**
 * A third of the steps (by their payload's length, so a saved seed still makes the workflow it
 * made) run past CALL_VISIBLE_MS: their call entry is written on its own before their result, and a
 * kill can land between the two (src/engine/pass-state.ts deferCall).
 */
export const SLOW_STEP_SECONDS = 0.35;
export const isSlowStep = (op: Op): boolean => op.kind === 'step' && op.payload.length % 3 === 0;

/**
 * When the harness sends a signal: before the wait is reached (it queues), once the run waits for
 * it, or once it waits and the host was killed and started again (a server is down meanwhile, and
 * the docs give no way to deliver without one, so it is sent after the restart).
 */
export type SignalWhen = 'before' | 'waiting' | 'across-kill';
/** An event is seen only by a wait that began before it arrived: never sent before the wait. */
export type EventWhen = 'waiting' | 'across-kill';

/** The ops the harness answers from outside: they need a server (`spool run` takes no signal or event). */
export const ANSWERED_KINDS: readonly OpKind[] = ['wait-signal', 'wait-event'];

export interface Workflow {
  seed: number;
  ops: Op[];
  /** The file bundled with `--with`, read back by checkout ops. */
  checkoutFile: Buffer;
}

/**
 * Bytes a script may print: text, NUL, bytes that are not UTF-8, newlines (a trailing one too),
 * sometimes large. What matters is that they come back as they went.
 */
export function payload(random: Random): Buffer {
  const shape = random.pick(['text', 'nul', 'latin1', 'binary', 'newlines', 'empty', 'large'] as const);
  switch (shape) {
    case 'text':
      return Buffer.from(`caf\u00e9 ${random.int(0, 1e6)} \u2603\n`);
    case 'nul':
      return Buffer.from([0x78, 0x00, 0x79, 0x0a]);
    case 'latin1':
      return Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    case 'binary':
      return random.bytes(random.int(1, 300));
    case 'newlines':
      return Buffer.from('\n\nlast\n\n');
    case 'empty':
      return Buffer.alloc(0);
    case 'large':
      return random.bytes(random.int(64, 300) * 1024);
  }
}

/**
 * Text a signal or an event carries: the HTTP API and `spool signal`'s argument take UTF-8 text only
 * (DESIGN.md §9; an argument cannot hold NUL), so unicode, quotes, newlines, backslashes and shell
 * syntax, never a leading '-' (it would be an option).
 */
export function text(random: Random): string {
  return random.pick([
    `caf\u00e9 \u2603 ${random.int(0, 1e6)}`,
    `"double" 'single' \\back\\slash`,
    'two\nlines\n',
    '\n\nlast\n\n',
    '$HOME `id` $(id) ; && | *',
    '\t\u00a0tab and nbsp \ud83d\ude00',
    '',
  ] as const);
}

/**
 * The graph a call-graph op runs, kept in `$VERIFY_DATA/<id>.yaml`: a durable sleep node (run by the
 * graph's coordinator, no process) and its input as its output, so the script sees `{"y":"<id>"}`.
 */
export const CHILD_GRAPH = ['nodes:', '  - { id: nap, type: sleep, config: { duration: 1ms } }', 'outputs:', '  y: { $expr: input.x }', ''].join('\n');

/** Ops by kind, each with a weight: steps and sleeps most, so there are passes to replay. */
const WEIGHTS: [OpKind, number][] = [
  ['step', 6],
  ['print', 2],
  ['put-file', 2],
  ['put-stdin', 2],
  ['refused-put', 2],
  ['refused-incr', 1],
  ['incr', 2],
  ['claim', 1],
  ['sleep', 3],
  ['wait-timeout', 1],
  ['emit', 1],
  ['lock', 1],
  ['call', 1],
  ['activity', 1],
  ['checkout', 1],
  // Last, and left out for the seeds saved before they existed, so those make the same workflows.
  ['wait-signal', 1],
  ['wait-event', 1],
  // After those, and left out for the seeds saved before them (GRAPH_KINDS). A graph child costs a
  // pass of its own, as a script child does: half the weight, so a seed's passes grow little.
  ['call-node', 1],
  ['call-graph', 0.5],
  // Left out for every saved seed (LATER_KINDS), so those make the same workflows.
  ['activity-all', 0.5],
];

function kindOf(random: Random, kinds: readonly OpKind[]): OpKind {
  const weighted = WEIGHTS.filter(([kind]) => kinds.includes(kind));
  let at = random.next() * weighted.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [kind, weight] of weighted) {
    at -= weight;
    if (at < 0) return kind;
  }
  return 'step';
}

export const ALL_KINDS: readonly OpKind[] = WEIGHTS.map(([kind]) => kind);
/** The kinds issue 30 added (an http node, a graph child), left out for the seeds saved before them (seeds.json's `graphs`). */
export const GRAPH_KINDS: readonly OpKind[] = ['call-node', 'call-graph'];
/** Kinds added after the last seed was saved: no saved seed draws them. */
export const LATER_KINDS: readonly OpKind[] = ['activity-all'];
/** The kinds before the harness answered waits: the workflows the seeds saved then were made of. */
export const KINDS_BEFORE_ANSWERED: readonly OpKind[] = ALL_KINDS.filter((kind) => !ANSWERED_KINDS.includes(kind));

/** A workflow of 6 to 14 ops with at least two sleeps among them, so later passes replay. */
export function generate(seed: number, random: Random, kinds: readonly OpKind[] = ALL_KINDS): Workflow {
  const count = random.int(6, 14);
  const ops: Op[] = [];
  for (let i = 0; i < count; i += 1) ops.push(op(random, kindOf(random, kinds), `o${i}`));
  for (const at of [random.int(1, count - 1), random.int(1, count)]) ops.splice(at, 0, { kind: 'sleep', id: `z${at}`, ms: random.int(100, 600) });
  ops.forEach((each, i) => (each.id = `${each.id.slice(0, 1)}${i}`));
  return { seed, ops, checkoutFile: payload(random) };
}

function op(random: Random, kind: OpKind, id: string): Op {
  switch (kind) {
    case 'step':
      return { kind, id, payload: payload(random), exit: random.chance(0.2) ? random.int(1, 9) : 0 };
    case 'print':
    case 'put-file':
    case 'put-stdin':
    case 'lock':
      return { kind, id, payload: payload(random) };
    case 'refused-put':
      return { kind, id, from: random.pick(['file', 'stdin'] as const) };
    case 'incr':
      return { kind, id, by: random.int(-5, 50) };
    case 'sleep':
      return { kind, id, ms: random.int(100, 600) };
    case 'wait-signal':
      return { kind, id, payload: text(random), second: text(random), via: random.pick(['cli', 'api'] as const), when: random.pick(['before', 'waiting', 'across-kill'] as const) };
    case 'wait-event':
      // In the order the store's jsonb keeps keys (shorter first), so the wait prints the JSON that was sent.
      return { kind, id, payload: { n: random.int(0, 1e6), text: text(random) }, key: `k${random.int(0, 99)}`, when: random.pick(['waiting', 'across-kill'] as const) };
    case 'activity':
      return { kind, id, payload: Buffer.concat([Buffer.from(`act-${id}`), Buffer.from([0x00, 0xff, 0x0a])]) };
    case 'activity-all':
      return { kind, id, payload: Buffer.concat([Buffer.from(`why-${id} `), Buffer.from([0x00, 0xff, 0x0a])]) };
    default:
      return { kind, id };
  }
}
