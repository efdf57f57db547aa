import { UsageError } from '../../common/errors.js';
import { idempotencyKey } from '../../common/ids.js';
import { Suspended } from '../../graph/node-host.js';
import { runNode } from '../../graph/nodes.js';
import { parseGraph } from '../../graph/parse.js';
import type { GraphNode } from '../../graph/types.js';
import type { PassState as Pass } from '../pass-state.js';
import type { Answer, CallNodeRequest, Request } from '../protocol.js';
import { EXIT } from '../protocol.js';

/**
 * The node as a graph of one would have it: its type and config checked by the graph's schema, so
 * a bad one is refused here, before the journal has a say, the same way on every pass.
 */
function nodeOf(pass: Pass, request: CallNodeRequest, name: string): GraphNode {
  const document = JSON.stringify({ nodes: [{ id: name, type: request.type, config: request.config }] });
  try {
    const [node] = parseGraph(document, 'config').nodes;
    if (node) return node;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The place is in a document made here, not one the script wrote: the reason alone says it.
    pass.refuse(`spool call-node: ${error.message.replace(/^config:\d+:\d+: /, '').replace(/'nodes\.0\./g, "'")}`);
  }
  throw new Error('a graph of one node parsed to none');
}

/**
 * `spool call-node TYPE --config JSON [--name NAME]`: one graph node kind run as durable calls of
 * the script's run, as a graph's runner runs a node (src/graph/nodes.ts), each of its calls
 * dispatched to the verbs like the script's own; a replay answers them from the journal, so an
 * http node recorded once is not sent again. `node.idempotency_key` is made from the run and the
 * position the node's first call takes: the same on every replay and re-dispatch of this call,
 * another for the next call-node of the run, whatever their names.
 */
export async function callNode(pass: Pass, request: CallNodeRequest, dispatch: (request: Request) => Promise<Answer>): Promise<Answer> {
  const name = request.name ?? request.type;
  const node = nodeOf(pass, request, name);
  const position = pass.nextPosition;
  const replayed = pass.replaying;
  const scope = {
    input: pass.run.input,
    steps: {},
    nodes: {},
    node: { id: name, idempotency_key: idempotencyKey(pass.run.id, 'call-node', name, position) },
  };
  let result;
  try {
    result = await runNode({ handle: dispatch, run: pass.run, host: pass.host }, node, scope);
  } catch (error) {
    if (error instanceof Suspended && pass.suspension) return { status: 'suspended', message: `script suspended awaiting ${pass.suspension.awaiting}` };
    throw error;
  }
  const stdout = `${JSON.stringify(result.output)}\n`;
  if (result.status === 'succeeded') return { status: 'ok', stdout, exitCode: 0, replayed };
  return { status: 'ok', stdout, exitCode: EXIT.failure, stderr: `spool call-node: ${result.error ?? `node ${name} failed`}`, replayed };
}
