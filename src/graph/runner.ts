import { writeSync } from 'node:fs';
import type { PassOutcome } from '../passes/local-pass.js';
import { Pass, type PassHost } from '../engine/pass.js';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import { evaluate, stringify, truthy } from '../pipeline/expressions.js';
import type { ExpressionScope } from '../pipeline/types.js';
import { parseGraphExpression } from './expressions.js';
import { runFanOut } from './fan-out.js';
import { Suspended, callOk, type NodeHost, type NodeResult } from './node-host.js';
import { nodeScope, runNode } from './nodes.js';
import { parseGraph } from './parse.js';
import type { Graph, GraphNode } from './types.js';

interface NodeState {
  status: 'succeeded' | 'failed' | 'skipped';
  /** Skipped because a node above it failed: the nodes below it are not run either. */
  afterFailure: boolean;
  error: string | null;
}

/**
 * One pass of a graph run, in this process, as a pipeline's coordinator is: it goes through the
 * nodes from the top each pass, and each node's durable calls answer from the journal once
 * recorded, so the graph picks up where the last pass left it. A node runs when the nodes it
 * depends on have ended, one node at a time in document order (a fan_out's http items run
 * together); a node after a failed one is skipped, as is one whose `if` is false.
 */
/** A node host that knows whether its pass is replaying: a replayed node's line is not printed again. */
interface GraphHost extends NodeHost {
  readonly replaying: boolean;
}

export class GraphRunner {
  private readonly states = new Map<string, NodeState>();
  private readonly scope: ExpressionScope & { nodes: Record<string, { output: unknown; status: string }> };

  constructor(
    private readonly host: GraphHost,
    private readonly graph: Graph,
    private readonly print: (text: string) => void,
  ) {
    const given = host.run.input;
    const input = typeof given === 'object' && given !== null && !Array.isArray(given) ? { ...graph.inputDefaults, ...given } : (given ?? graph.inputDefaults);
    this.scope = { input, steps: {}, nodes: {} };
  }

  /** Runs every node it can; answers the nodes that failed (none: the graph succeeded). */
  async run(): Promise<GraphNode[]> {
    for (let progress = true; progress; ) {
      progress = false;
      for (const node of this.graph.nodes) {
        if (this.states.has(node.id)) continue;
        const deps = node.dependsOn.map((id) => this.states.get(id));
        if (deps.some((dep) => dep === undefined)) continue;
        progress = true;
        if (deps.some((dep) => dep?.status === 'failed' || dep?.afterFailure)) this.end(node, 'skipped', null, 'a node it depends on failed', true);
        else if (node.if !== null && !truthy(evaluate(parseGraphExpression(node.if), this.scope))) this.end(node, 'skipped', null, 'its condition is false');
        else await this.runOne(node);
      }
    }
    await this.setOutputs();
    return this.graph.nodes.filter((node) => this.states.get(node.id)?.status === 'failed');
  }

  private async runOne(node: GraphNode): Promise<void> {
    const scope = nodeScope(this.scope, this.host.run.id, node.id);
    const result: NodeResult = node.fanOut ? await runFanOut(this.host, node, node.fanOut, scope) : await runNode(this.host, node, scope);
    this.end(node, result.status, result.output, result.error);
  }

  private end(node: GraphNode, status: NodeState['status'], output: unknown, why: string | null, afterFailure = false): void {
    this.states.set(node.id, { status, afterFailure, error: status === 'failed' ? why : null });
    this.scope.nodes[node.id] = { output, status };
    // A node whose calls were all replayed is followed by recorded calls: it said so on the pass that ran it.
    if (!this.host.replaying) this.print(`  ${node.id}: ${status}${why ? ` (${why})` : ''}\n`);
  }

  /** The graph's `outputs`, each a durable `output.set` of the run, read once every node has ended. */
  private async setOutputs(): Promise<void> {
    for (const [key, { $expr }] of Object.entries(this.graph.outputs)) {
      await callOk(this.host, { verb: 'output.set', key, value: stringify(evaluate(parseGraphExpression($expr), this.scope)) });
    }
  }

  /** Why the graph failed, in one line: the failed nodes, and the first one's reason. */
  failure(failed: GraphNode[]): string {
    const first = failed[0];
    const reason = first ? this.states.get(first.id)?.error : null;
    return `node ${failed.map((node) => node.id).join(', ')} failed${reason ? `: ${reason}` : ''}`;
  }
}

/** Runs one pass of a graph run (a run recorded with the `graph` interpreter). */
export async function runGraphPass(
  store: Store,
  run: RunRecord,
  host: PassHost,
  options: { output: 'inherit' | number; lenient?: boolean; pass?: Pass },
): Promise<PassOutcome> {
  const graph = parseGraph(run.script, run.workflow);
  // A pass made by the caller: a replay's (engine/replay-pass.ts).
  const pass = options.pass ?? (await Pass.start(store, run, host, options.lenient));
  const fd = options.output === 'inherit' ? 1 : options.output;
  const nodeHost: GraphHost = {
    handle: (request) => pass.handle(request),
    run,
    host,
    get replaying() {
      return pass.replaying;
    },
  };
  const runner = new GraphRunner(nodeHost, graph, (text) => void writeSync(fd, text));
  try {
    const failed = await runner.run();
    return failed.length === 0 ? { kind: 'succeeded' } : { kind: 'failed', message: runner.failure(failed) };
  } catch (error) {
    if (error instanceof Suspended && pass.suspension) return { kind: 'suspended', suspension: pass.suspension };
    if (pass.failure) return { kind: 'failed', message: pass.failure };
    return { kind: 'failed', message: (error as Error).message };
  }
}
