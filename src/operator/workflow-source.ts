import { interpreterFor } from '../agent/interpreters.js';
import { PIPELINE, isPipelineFile } from '../pipeline/admission.js';
import type { ScriptSource } from '../store/types.js';
import type { Workflow } from './api/generated.js';

/**
 * What runs of a Workflow run, copied into each run, handler and schedule when they are made: a
 * Workflow changed later never alters a run already in flight.
 */
export function workflowSource(workflow: Workflow): ScriptSource {
  const { filename, script } = workflow.spec;
  return {
    workflow: `${workflow.metadata.name ?? ''}/${filename}`,
    interpreter: isPipelineFile(filename) ? PIPELINE : interpreterFor(filename).join(' '),
    script,
    cwd: null,
  };
}
