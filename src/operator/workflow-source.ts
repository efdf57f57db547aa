import type { ScriptSource } from '../store/types.js';
import { ensureError } from '../common/errors.js';
import { checkDocument } from '../workflow-file/check.js';
import { interpreterOf, kindOf } from '../common/workflow-file.js';
import type { EnvFrom, EnvVar, Template, Workflow } from './api/generated.js';
import type { Readiness } from './ready-condition.js';
import { workflowScript, type ReadConfigMap, type WorkflowScript } from './workflow-script.js';

/** What a pass's pod takes from the Workflow (a run's `runner`). */
export interface PodSettings {
  image?: string;
  env?: EnvVar[];
  envFrom?: EnvFrom[];
  serviceAccountName?: string;
  template?: Template;
}

/** What runs of a Workflow start from, or why none can start yet (its ConfigMap is missing, say). */
export type ResolvedSource = { ready: true; source: ScriptSource } | { ready: false; reason: string; message: string };

/** Reads the Workflow's script (from its ConfigMap when it names one) and makes the runs' source of it. */
export async function resolveSource(workflow: Workflow, readConfigMap: ReadConfigMap): Promise<ResolvedSource> {
  const script = await workflowScript(workflow, readConfigMap);
  return script.ok ? { ready: true, source: workflowSource(workflow, script.script) } : { ready: false, reason: script.reason, message: script.message };
}

/**
 * What runs of a Workflow run, copied into each run, handler and schedule when they are made: a
 * Workflow (or its ConfigMap) changed later never alters a run already in flight, neither its
 * script nor its pods.
 */
export function workflowSource(workflow: Workflow, script: string): ScriptSource {
  const { filename } = workflow.spec;
  const pod = workflowPodSettings(workflow);
  return {
    workflow: `${workflow.metadata.name ?? ''}/${filename}`,
    interpreter: interpreterOf(filename, script),
    script,
    cwd: null,
    runner: Object.keys(pod).length > 0 ? { ...pod } : null,
  };
}

/** What a Workflow's pass pods are made of now (a run keeps what they were when it started). */
export function workflowPodSettings(workflow: Workflow): PodSettings {
  const { image, env, envFrom, serviceAccountName, template } = workflow.spec;
  return {
    ...(image ? { image } : {}),
    ...(env?.length ? { env } : {}),
    ...(envFrom?.length ? { envFrom } : {}),
    ...(serviceAccountName ? { serviceAccountName } : {}),
    ...(template && Object.keys(template).length > 0 ? { template } : {}),
  };
}

/**
 * Whether the operator can run this Workflow: its script can be read (its ConfigMap and key exist)
 * and a pipeline document parses (with its line and column if not).
 */
export function workflowReadiness(workflow: Workflow, script: WorkflowScript): Readiness {
  const { filename } = workflow.spec;
  if (!script.ok) return { ready: false, reason: script.reason, message: script.message };
  const from = script.from ? ` from ${script.from}` : '';
  const kind = kindOf(filename, script.script);
  if (kind !== 'pipeline' && kind !== 'graph') return { ready: true, reason: 'Valid', message: `runs ${filename}${from} with ${interpreterOf(filename)}` };
  try {
    checkDocument(filename, script.script);
    return { ready: true, reason: 'Valid', message: `${kind} ${filename}${from}` };
  } catch (error) {
    return { ready: false, reason: 'InvalidPipeline', message: ensureError(error).message };
  }
}

/** The pod settings a run was made with (none: the operator's defaults). */
export function podSettingsOf(run: { runner: ScriptSource['runner'] }): PodSettings {
  return (run.runner ?? {});
}
