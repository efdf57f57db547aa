import { interpreterFor } from '../agent/interpreters.js';
import { PIPELINE, isPipelineFile } from '../pipeline/admission.js';
import type { ScriptSource } from '../store/types.js';
import { ensureError } from '../common/errors.js';
import { parsePipeline } from '../pipeline/parse.js';
import type { EnvFrom, EnvVar, Template, Workflow } from './api/generated.js';
import type { Readiness } from './ready-condition.js';

/** What a pass's pod takes from the Workflow (a run's `runner`). */
export interface PodSettings {
  image?: string;
  env?: EnvVar[];
  envFrom?: EnvFrom[];
  serviceAccountName?: string;
  template?: Template;
}

/**
 * What runs of a Workflow run, copied into each run, handler and schedule when they are made: a
 * Workflow changed later never alters a run already in flight, neither its script nor its pods.
 */
export function workflowSource(workflow: Workflow): ScriptSource {
  const { filename, script, image, env, envFrom, serviceAccountName, template } = workflow.spec;
  const pod: PodSettings = {
    ...(image ? { image } : {}),
    ...(env?.length ? { env } : {}),
    ...(envFrom?.length ? { envFrom } : {}),
    ...(serviceAccountName ? { serviceAccountName } : {}),
    ...(template && Object.keys(template).length > 0 ? { template } : {}),
  };
  return {
    workflow: `${workflow.metadata.name ?? ''}/${filename}`,
    interpreter: isPipelineFile(filename) ? PIPELINE : interpreterFor(filename).join(' '),
    script,
    cwd: null,
    runner: Object.keys(pod).length > 0 ? { ...pod } : null,
  };
}

/** Whether the operator can run this Workflow: a pipeline document must parse (with its line and column if not). */
export function workflowReadiness(workflow: Workflow): Readiness {
  const { filename, script } = workflow.spec;
  if (!isPipelineFile(filename)) return { ready: true, reason: 'Valid', message: `runs ${filename} with ${interpreterFor(filename).join(' ')}` };
  try {
    parsePipeline(script, filename);
    return { ready: true, reason: 'Valid', message: `pipeline ${filename}` };
  } catch (error) {
    return { ready: false, reason: 'InvalidPipeline', message: ensureError(error).message };
  }
}

/** The pod settings a run was made with (none: the operator's defaults). */
export function podSettingsOf(run: { runner: ScriptSource['runner'] }): PodSettings {
  return (run.runner ?? {});
}
