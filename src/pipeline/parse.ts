import { checkExpressions } from './check-expressions.js';
import { toPipeline } from './convert.js';
import { checkGraph } from './graph.js';
import { PipelineProblem } from './problem.js';
import { readYaml } from './read-yaml.js';
import { checkSchema } from './schema-check.js';
import { locateProblem } from './source-location.js';
import type { Pipeline } from './types.js';

/**
 * Reads a pipeline document (docs/pipelines.md) and checks everything that can be checked before
 * a run: YAML syntax, the schema, the depends_on graph and every `${{ }}` expression. The first
 * problem is thrown as a UsageError of one line, `<file>:<line>:<col>: <what was expected>`;
 * `file` is used only in that message.
 */
export function parsePipeline(text: string, file: string): Pipeline {
  const source = readYaml(text, file);
  try {
    const pipeline = toPipeline(checkSchema(source.data));
    checkGraph(pipeline);
    checkExpressions(pipeline);
    return pipeline;
  } catch (error) {
    if (error instanceof PipelineProblem) throw locateProblem(source, error);
    throw error;
  }
}
