import { Ajv } from 'ajv';
import { onFirstUse } from '../common/on-first-use.js';
import { checkDependencies } from '../pipeline/graph.js';
import { PipelineProblem } from '../pipeline/problem.js';
import { readYaml } from '../pipeline/read-yaml.js';
import { definitionsOf, problemFor, type DocumentKind } from '../pipeline/schema-messages.js';
import { locateProblem } from '../pipeline/source-location.js';
import { checkGraphExpressions } from './check-expressions.js';
import { toGraph, type RawGraph } from './convert.js';
import schema from './schema.json' with { type: 'json' };
import type { Graph } from './types.js';

// Compiled once, when a graph is first read, as the pipeline schema is (src/pipeline/schema-check.ts
// says why these options).
const validator = onFirstUse(() => new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strict: true }).compile<RawGraph>(schema));
const GRAPH_DOCUMENT: DocumentKind = { name: 'graph', shape: 'a map with nodes', definitions: definitionsOf(schema) };

/**
 * Reads a graph document (docs/graphs.md), JSON or YAML: the schema, the depends_on graph and
 * every expression are checked before a run. The first problem is thrown as a UsageError of one
 * line, `<file>:<line>:<col>: <reason>`, as a pipeline's is.
 */
export function parseGraph(text: string, file: string): Graph {
  const source = readYaml(text, file);
  const validate = validator();
  try {
    if (!validate(source.data)) throw problemFor(validate.errors ?? [], source.data, GRAPH_DOCUMENT);
    const graph = toGraph(source.data);
    checkDependencies(
      graph.nodes.map((node) => ({ name: node.id, dependsOn: node.dependsOn })),
      (id) => ['nodes', graph.nodes.findIndex((node) => node.id === id)],
      'node',
    );
    checkGraphExpressions(graph);
    return graph;
  } catch (error) {
    if (error instanceof PipelineProblem) throw locateProblem(source, error);
    throw error;
  }
}
