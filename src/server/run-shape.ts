import type { ShapeVertex, RunShape } from '../api/responses.js';
import { UsageError } from '../common/errors.js';
import { parseGraph } from '../graph/parse.js';
import { parsePipeline } from '../pipeline/parse.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type JournalEntry, type RunRecord } from '../store/types.js';

type State = ShapeVertex['state'];

/** What one job or node of the document is, as far as its state can be read. */
interface Declared {
  name: string;
  dependsOn: string[];
  hasIf: boolean;
  /** A literal fan_out's item count; an expression's is not known until it runs. */
  fanOut: { total: number | null } | null;
  /** Each attempt (or item) leaves a child run or an http step: not having one means it did not run. */
  leavesTrace: boolean;
  /** Attempts in all: a failed one before the last is retried (each a new child run). */
  attempts: number;
}

/** One attempt or fan_out item of a vertex, from a child run or a graph's http step. */
interface Trace {
  item: number | null;
  state: 'running' | 'succeeded' | 'failed';
  runId: string | null;
}

/** `deploy`, or `deploy[3]` for a fan_out's item, from a child's workflow `<run workflow>#<name>`. */
const ITEM_NAME = /^(.*?)(?:\[(\d+)\])?$/;

function childState(child: RunRecord): Trace['state'] {
  if (child.status === 'succeeded') return 'succeeded';
  return TERMINAL_STATUSES.includes(child.status) ? 'failed' : 'running';
}

function httpState(result: JournalEntry | undefined): Trace['state'] {
  if (!result) return 'running';
  try {
    const value = JSON.parse(String(result.data.json ?? 'null')) as { status?: unknown } | null;
    return value?.status === 'succeeded' ? 'succeeded' : 'failed';
  } catch {
    return 'failed';
  }
}

/**
 * Each vertex's attempts and items, in the order they started: a pipeline's jobs and a graph's
 * script, call and approval nodes are child runs named `<workflow>#<name>` (`#<name>[i]` an item);
 * a graph's http nodes are `step_fn` calls named `node <name>` (`node <name>[i]`) in its journal.
 */
function tracesOf(run: RunRecord, children: RunRecord[], journal: JournalEntry[]): Map<string, Trace[]> {
  const traces = new Map<string, Trace[]>();
  const add = (full: string, trace: Omit<Trace, 'item'>) => {
    const [, name = full, item] = ITEM_NAME.exec(full) ?? [];
    traces.set(name, [...(traces.get(name) ?? []), { ...trace, item: item === undefined ? null : Number(item) }]);
  };
  const prefix = `${run.workflow}#`;
  for (const child of children) {
    if (child.workflow.startsWith(prefix)) add(child.workflow.slice(prefix.length), { state: childState(child), runId: child.id });
  }
  const results = new Map(journal.filter((entry) => entry.kind === 'result').map((entry) => [entry.position, entry]));
  for (const entry of journal) {
    if (entry.kind === 'call' && entry.verb === 'step_fn' && entry.name.startsWith('node ')) {
      add(entry.name.slice('node '.length), { state: httpState(results.get(entry.position)), runId: null });
    }
  }
  return traces;
}

/** A vertex's state, and whether it was skipped for a failure above it (which skips the ones below it too). */
interface Settled {
  state: State;
  belowFailure: boolean;
}

/** A vertex's state from its traces: the last attempt's, or over a fan_out's items. */
function traced(vertex: Declared, traces: Trace[], runEnded: boolean): State {
  // A child still going in a run that ended was cancelled with it.
  if (traces.some((trace) => trace.state === 'running')) return runEnded ? 'failed' : 'running';
  if (vertex.fanOut) {
    if (traces.some((trace) => trace.state === 'failed')) return 'failed';
    const total = vertex.fanOut.total;
    if (traces.length === total || (total === null && runEnded)) return 'succeeded';
    return runEnded ? 'failed' : 'running';
  }
  const last = traces.at(-1)?.state ?? 'failed';
  return last === 'failed' && !runEnded && traces.length < vertex.attempts ? 'running' : last;
}

/**
 * A vertex that left no trace, from the vertices it depends on: below a failure it was skipped;
 * before they all ended it waits. After, one that leaves traces was skipped (its `if` was false)
 * once the run ended, and a graph's sleep or wait node is under way until the run ends (then it
 * ran, or, with an `if` or in a cancelled run, which cannot be told: `unknown`).
 */
function untraced(vertex: Declared, deps: Settled[], run: RunRecord, runEnded: boolean): Settled {
  if (deps.some((dep) => dep.state === 'failed' || dep.belowFailure)) return { state: 'skipped', belowFailure: true };
  const waiting = (): Settled => ({ state: runEnded ? 'skipped' : 'waiting', belowFailure: false });
  if (deps.some((dep) => dep.state === 'waiting' || dep.state === 'running')) return waiting();
  if (vertex.fanOut?.total === 0) return { state: 'succeeded', belowFailure: false };
  if (vertex.leavesTrace) return waiting();
  // A graph runs every node it can before it ends; a cancelled one may have stopped in this one.
  const ran = run.status !== 'cancelled' && !vertex.hasIf;
  return { state: !runEnded ? 'running' : ran ? 'succeeded' : 'unknown', belowFailure: false };
}

/**
 * The run's jobs or nodes from its document; none when this version no longer reads the document
 * a run of an older one recorded (the rest of its page still shows).
 */
function declared(run: RunRecord): { kind: RunShape['kind']; vertices: Declared[] } {
  try {
    return fromDocument(run);
  } catch (error) {
    if (error instanceof UsageError) return { kind: run.interpreter === 'graph' ? 'graph' : 'pipeline', vertices: [] };
    throw error;
  }
}

function fromDocument(run: RunRecord): { kind: RunShape['kind']; vertices: Declared[] } {
  if (run.interpreter === 'pipeline') {
    const jobs = parsePipeline(run.script, run.workflow).jobs;
    return {
      kind: 'pipeline',
      vertices: jobs.map((job) => ({
        name: job.name,
        dependsOn: job.dependsOn,
        hasIf: job.if !== null,
        fanOut: job.fanOut ? { total: Array.isArray(job.fanOut.items) ? job.fanOut.items.length : null } : null,
        leavesTrace: true,
        attempts: job.retry?.attempts ?? 1,
      })),
    };
  }
  if (run.interpreter === 'graph') {
    const nodes = parseGraph(run.script, run.workflow).nodes;
    return {
      kind: 'graph',
      vertices: nodes.map((node) => ({
        name: node.id,
        dependsOn: node.dependsOn,
        hasIf: node.if !== null,
        fanOut: node.fanOut ? { total: Array.isArray(node.fanOut.items) ? node.fanOut.items.length : null } : null,
        leavesTrace: node.type !== 'sleep' && node.type !== 'wait',
        attempts: node.type === 'script' || node.type === 'call' ? (node.retry?.attempts ?? 1) : 1,
      })),
    };
  }
  return { kind: null, vertices: [] };
}

/**
 * The shape of a pipeline or graph run (`GET /v1/runs/:id/shape`): its jobs or nodes with what
 * they depend on, each one's state, a fan_out's items and the child run of a job's last attempt,
 * read from the run's document, its child runs and its journal. A script run has none (kind null).
 */
export async function runShape(store: Store, run: RunRecord): Promise<RunShape> {
  const { kind, vertices } = declared(run);
  if (kind === null) return { kind, vertices: [] };
  const [children, journal] = await Promise.all([
    store.listRuns({ parentId: run.id, limit: 10_000 }).then((runs) => runs.reverse()),
    kind === 'graph' ? store.readJournal(run.id) : Promise.resolve([]),
  ]);
  const traces = tracesOf(run, children, journal);
  const runEnded = TERMINAL_STATUSES.includes(run.status);
  const known = new Map<string, Settled>();
  const shaped: ShapeVertex[] = [];
  // Document order can put a vertex above one it depends on: settle each after its dependencies.
  const byName = new Map(vertices.map((vertex) => [vertex.name, vertex]));
  const visit = (vertex: Declared): Settled => {
    const done = known.get(vertex.name);
    if (done) return done;
    const deps = vertex.dependsOn.flatMap((name) => {
      const above = byName.get(name);
      return above ? [visit(above)] : [];
    });
    const mine = traces.get(vertex.name) ?? [];
    const settled = mine.length > 0 ? { state: traced(vertex, mine, runEnded), belowFailure: false } : untraced(vertex, deps, run, runEnded);
    known.set(vertex.name, settled);
    return settled;
  };
  for (const vertex of vertices) {
    const mine = traces.get(vertex.name) ?? [];
    const last = mine.filter((trace) => trace.item === null).at(-1);
    const items = mine.filter((trace) => trace.item !== null);
    shaped.push({
      name: vertex.name,
      dependsOn: vertex.dependsOn,
      state: visit(vertex).state,
      runId: last?.runId ?? null,
      items: vertex.fanOut
        ? {
            total: vertex.fanOut.total,
            started: items.length,
            done: items.filter((trace) => trace.state === 'succeeded').length,
            failed: items.filter((trace) => trace.state === 'failed').length,
          }
        : null,
    });
  }
  return { kind, vertices: shaped };
}
