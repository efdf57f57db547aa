import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TerminalError, UsageError } from '../common/errors.js';
import { readTextFile } from '../common/text-file.js';
import type { ConcurrencyRule, Throttle } from '../engine/admission.js';
import { graphInputProblem } from '../graph/inputs.js';
import { parseGraph } from '../graph/parse.js';
import { admissionRules } from '../pipeline/admission.js';
import { parsePipeline } from '../pipeline/parse.js';
import { documentKind, interpreterOf, isDocumentFile, kindOf, scriptOf } from '../common/workflow-file.js';

/** Where a command is on PATH, or null: how `spool run` and `spool doctor` tell an interpreter is installed. */
export function findOnPath(command: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Checks a file's text as a workflow, wherever it will run: a pipeline or graph document must be
 * valid (the error names its line and column). A script's text is not checked: its interpreter does that.
 */
export function checkDocument(file: string, text: string): void {
  if (!isDocumentFile(file)) scriptOf(file);
  else if (kindOf(file, text) === 'graph') parseGraph(text, file);
  else parsePipeline(text, file);
}

/** Refuses a script whose interpreter is not installed here, before anything is recorded. */
export function checkInstalled(file: string): void {
  if (isDocumentFile(file)) return;
  const [command] = scriptOf(file).command;
  if (command && !findOnPath(command)) {
    throw new UsageError(`${file} needs ${command}, which is not installed here (not found on PATH)`);
  }
}

/**
 * Reads a workflow file to run here, checking it before anything is recorded: it exists, and its
 * interpreter is installed or, for a pipeline or a graph, the document is valid.
 */
export function readWorkflowFile(file: string): { script: string; interpreter: string } {
  if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`${file}: no such file`);
  if (isDocumentFile(file)) {
    const script = readTextFile(file);
    checkDocument(file, script);
    return { script, interpreter: interpreterOf(file, script) };
  }
  const interpreter = interpreterOf(file);
  checkInstalled(file);
  return { script: readTextFile(file), interpreter };
}

/**
 * What a document run asks of admission, read when it is submitted: a pipeline's concurrency and
 * throttle, from its input; a graph asks nothing, but is checked all the same, so a bad one is
 * refused at submit with its line and column; an input its typed inputs do not take is refused
 * too, as `invalid_input` (a 400 from the API, the Run's failure on a cluster).
 */
export function documentAdmission(text: string, file: string, input: unknown): { concurrency: ConcurrencyRule | null; throttle: Throttle | null } {
  if (documentKind(text) === 'pipeline') return admissionRules(text, file, input);
  const problem = graphInputProblem(parseGraph(text, file).typedInputs, input);
  if (problem) throw new TerminalError('usage', problem, { code: 'invalid_input' });
  return { concurrency: null, throttle: null };
}
