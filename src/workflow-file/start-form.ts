import { GRAPH } from '../common/workflow-file.js';
import { parseGraph } from '../graph/parse.js';
import type { FormField } from '../pipeline/types.js';

/**
 * The typed form that starts a run of a workflow: a graph's declared inputs (docs/graphs.md), or
 * null where the workflow declares none a form can take (a script, a pipeline, a graph without
 * typed inputs), and a person gives the input as JSON.
 */
export function startForm(source: { workflow: string; interpreter: string; script: string }): FormField[] | null {
  return source.interpreter === GRAPH ? parseGraph(source.script, source.workflow).inputForm : null;
}
