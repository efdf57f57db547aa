import { extname } from 'node:path';
import { UsageError } from './errors.js';

/**
 * What a workflow file is and how it runs, decided here alone for `spool run`, `submit`, `call`,
 * `spawn`, the server and the operator: its kind (by its name), the interpreter recorded for its
 * runs and whether a pass runs in this process. It imports nothing but `common/`, so the in-script
 * client and the engine can use it; the checks that need the pipeline parser are in `workflow-file/check.ts`.
 */
export type WorkflowKind = 'bash' | 'python' | 'node' | 'pipeline' | 'graph';

/** The interpreter recorded for a pipeline run: its passes run in-process, not as a script. */
export const PIPELINE = 'pipeline';

/** The interpreter recorded for a graph run (docs/graphs.md): in-process too, by the graph's runner. */
export const GRAPH = 'graph';

/** A script's kind and interpreter command line by extension; bash runs with errexit and nounset. */
const SCRIPTS: Record<string, { kind: WorkflowKind; command: string[] }> = {
  '.sh': { kind: 'bash', command: ['bash', '-eu'] },
  '.bash': { kind: 'bash', command: ['bash', '-eu'] },
  '.py': { kind: 'python', command: ['python3'] },
  '.mjs': { kind: 'node', command: ['node'] },
  '.js': { kind: 'node', command: ['node'] },
  '.cjs': { kind: 'node', command: ['node'] },
};

/**
 * Every interpreter string a run can be recorded with. Runs already in stores carry these exact
 * strings: never change one, only add.
 */
export const RECORDED_INTERPRETERS = ['bash -eu', 'python3', 'node', PIPELINE, GRAPH];

/** A document (YAML or JSON) rather than a script: a pipeline or a graph, told apart by its content. */
export const isDocumentFile = (file: string): boolean => /\.(ya?ml|json)$/i.test(file);

/**
 * A document's kind by its content: a graph when its top level has `nodes` (a pipeline has `jobs`).
 * Cheap on purpose (the in-script client loads this module, and no YAML parser): a JSON text is
 * parsed, YAML is looked at for a `nodes:` key at the start of a line. A document that is neither
 * is read as a pipeline, whose parser then says what is wrong with it.
 */
export function documentKind(text: string): 'pipeline' | 'graph' {
  try {
    const data = JSON.parse(text) as unknown;
    return typeof data === 'object' && data !== null && !Array.isArray(data) && Object.hasOwn(data, 'nodes') ? 'graph' : 'pipeline';
  } catch {
    return /^(nodes|"nodes"|'nodes')[ \t]*:/m.test(text) ? 'graph' : 'pipeline';
  }
}

/** A script's kind and interpreter command line, or one line saying which extensions pick one. */
export function scriptOf(file: string): { kind: WorkflowKind; command: string[] } {
  const script = SCRIPTS[extname(file).toLowerCase()];
  if (!script) {
    throw new UsageError(`cannot tell how to run ${file}: its extension picks the interpreter (${Object.keys(SCRIPTS).join(', ')})`);
  }
  return script;
}

/** A file's kind: a script's by its extension, a document's by its text (a pipeline when there is none). */
export function kindOf(file: string, text?: string): WorkflowKind {
  if (!isDocumentFile(file)) return scriptOf(file).kind;
  return text === undefined ? 'pipeline' : documentKind(text);
}

/** The interpreter recorded for a run of this file (`bash -eu`, `python3`, `node`, `pipeline` or `graph`). */
export function interpreterOf(file: string, text?: string): string {
  if (!isDocumentFile(file)) return scriptOf(file).command.join(' ');
  return kindOf(file, text) === 'graph' ? GRAPH : PIPELINE;
}

/**
 * How a recorded run's pass runs: a pipeline's or a graph's coordinator in this process, else its
 * script as a child process.
 */
export const runsInProcess = (run: { interpreter: string }): boolean => run.interpreter === PIPELINE || run.interpreter === GRAPH;
