import { paths, type Expr } from '../pipeline/expressions.js';
import { ExpressionError } from '../pipeline/expression-error.js';
import { ancestors } from '../pipeline/graph.js';
import { PipelineProblem, type DocumentPath } from '../pipeline/problem.js';
import { suggest } from '../pipeline/suggest.js';
import { exprsIn, isExpr, parseGraphExpression } from './expressions.js';
import type { Graph, GraphNode } from './types.js';

/** Where an expression sits, and what it may read there. */
interface Site {
  path: DocumentPath;
  text: string;
  /** The node whose upstream nodes it may read; null in `outputs`, which are read after every node. */
  node: GraphNode | null;
  /** In the config of a fan_out node, where item and index are the current item's. */
  item: boolean;
  label: string;
}

/**
 * Parses every expression of a graph (each `$expr`, each `if`) and checks what it reads, so a typo
 * in a node id is refused at submit rather than read as null when the node runs.
 */
export function checkGraphExpressions(graph: Graph): void {
  const upstream = ancestors(graph.nodes.map((node) => ({ name: node.id, dependsOn: node.dependsOn })));
  const ids = graph.nodes.map((node) => node.id);
  for (const site of sites(graph)) {
    const expr = parse(site);
    for (const path of paths(expr)) checkPath(site, path, ids, upstream);
  }
}

function sites(graph: Graph): Site[] {
  const found: Site[] = [];
  for (const node of graph.nodes) {
    const at: DocumentPath = ['nodes', node.index];
    const label = `node '${node.id}'`;
    if (node.if !== null) found.push({ path: [...at, 'if'], text: node.if, node, item: false, label: `'if' of ${label}` });
    const items = node.fanOut?.items;
    if (isExpr(items)) found.push({ path: [...at, 'fan_out', 'items', '$expr'], text: items.$expr, node, item: false, label: `'fan_out.items' of ${label}` });
    for (const { path, text } of exprsIn(node.config, [...at, 'config']))
      found.push({ path, text, node, item: node.fanOut !== null, label: `the config of ${label}` });
  }
  for (const [key, value] of Object.entries(graph.outputs))
    found.push({ path: ['outputs', key, '$expr'], text: value.$expr, node: null, item: false, label: `output '${key}'` });
  return found;
}

function parse(site: Site): Expr {
  try {
    return parseGraphExpression(site.text);
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    throw new PipelineProblem(`bad expression '${site.text}': ${error.reason}`, site.path, 'value', error.offset);
  }
}

const NODE_FIELDS = ['id', 'idempotency_key'];

function checkPath(site: Site, path: Extract<Expr, { kind: 'path' }>, ids: readonly string[], upstream: Map<string, Set<string>>): void {
  const problem = (reason: string) => new PipelineProblem(reason, site.path, 'value', path.at);
  const [first, second] = path.keys;
  switch (path.root) {
    case 'item':
    case 'index':
      if (!site.item) throw problem(`'${path.root}' is only defined in the config of a node with a fan_out, not in ${site.label}`);
      return;
    case 'node':
      if (site.node === null) throw problem(`'node' is the node that runs; ${site.label} belongs to no node`);
      if (!NODE_FIELDS.includes(String(first)))
        throw problem(`node.${String(first ?? '')} is not known; a node has ${NODE_FIELDS.map((field) => `node.${field}`).join(' and ')}`);
      return;
    case 'nodes': {
      const id = String(first ?? '');
      if (!ids.includes(id)) throw problem(`unknown node '${id}' in ${path.text}${suggest(id, ids)}`);
      if (second !== undefined && second !== 'output' && second !== 'status')
        throw problem(`${path.text}: a node has nodes.${id}.output and nodes.${id}.status, not '${String(second)}'`);
      if (site.node === null) return;
      if (id === site.node.id) throw problem(`node '${id}' reads its own ${path.text}; a node sees only the nodes it depends on`);
      if (!upstream.get(site.node.id)?.has(id))
        throw problem(`node '${site.node.id}' reads ${path.text} but does not depend on '${id}', so it may not have run yet; add it to depends_on`);
      return;
    }
    default:
      return;
  }
}
