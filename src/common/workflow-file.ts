import { extname } from 'node:path';
import { UsageError } from './errors.js';

/**
 * What a workflow file is and how it runs, decided here alone for `spool run`, `submit`, `call`,
 * `spawn`, the server and the operator: its kind (by its name), the interpreter recorded for its
 * runs and whether a pass runs in this process. It imports nothing but `common/`, so the in-script
 * client and the engine can use it; the checks that need the pipeline parser are in `workflow-file/check.ts`.
 */
export type WorkflowKind = 'bash' | 'python' | 'node' | 'pipeline';

/** The interpreter recorded for a pipeline run: its passes run in-process, not as a script. */
export const PIPELINE = 'pipeline';

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
export const RECORDED_INTERPRETERS = ['bash -eu', 'python3', 'node', PIPELINE];

export const isPipelineFile = (file: string): boolean => /\.ya?ml$/i.test(file);

/** A script's kind and interpreter command line, or one line saying which extensions pick one. */
export function scriptOf(file: string): { kind: WorkflowKind; command: string[] } {
  const script = SCRIPTS[extname(file).toLowerCase()];
  if (!script) {
    throw new UsageError(`cannot tell how to run ${file}: its extension picks the interpreter (${Object.keys(SCRIPTS).join(', ')})`);
  }
  return script;
}

export function kindOf(file: string): WorkflowKind {
  return isPipelineFile(file) ? 'pipeline' : scriptOf(file).kind;
}

/** The interpreter recorded for a run of this file (`bash -eu`, `python3`, `node` or `pipeline`). */
export function interpreterOf(file: string): string {
  return isPipelineFile(file) ? PIPELINE : scriptOf(file).command.join(' ');
}

/** How a recorded run's pass runs: a pipeline by its coordinator in this process, else its script as a child process. */
export const runsInProcess = (run: { interpreter: string }): boolean => run.interpreter === PIPELINE;
