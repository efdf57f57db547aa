import { PIPELINE } from '../pipeline/admission.js';
import { parsePipeline } from '../pipeline/parse.js';
import { BODIES, type PinnedBody } from '../pipeline/pinned-bodies.js';
import type { Workflow } from './api/generated.js';
import type { ResolvedSource } from './workflow-source.js';

/** Bodies inside bodies (a body that fans out itself) are pinned too, this deep at most. */
const MAX_DEPTH = 4;

/**
 * A pipeline run on a cluster fans out to other Workflows, never to files: the operator's
 * filesystem is nobody's checkout. So when a run's source is resolved (as the run is admitted, or
 * a Handler or Schedule takes its Workflow), each `fan_out: workflow: <name>` is read from the
 * Workflow of that name in the same namespace, and its script and pod settings are kept with the
 * run: every item runs the body as it was when the parent started, whatever edits come later.
 * A body that does not exist (yet) keeps the parent from starting, saying which.
 */
export async function withFanOutBodies(
  namespace: string,
  resolved: ResolvedSource,
  lookup: (namespace: string, name: string) => Workflow | null,
  resolve: (workflow: Workflow) => Promise<ResolvedSource>,
  depth = 0,
): Promise<ResolvedSource> {
  if (!resolved.ready || resolved.source.interpreter !== PIPELINE) return resolved;
  const { source } = resolved;
  let names: string[];
  try {
    const pipeline = parsePipeline(source.script, source.workflow);
    names = [...new Set(pipeline.jobs.flatMap((job) => (job.fanOut?.workflow ? [job.fanOut.workflow] : [])))];
  } catch {
    // A document that does not parse is admitted as it is and fails at its first pass, saying
    // why; "not ready" would keep the Run Pending, waiting for a script that will never change.
    return resolved;
  }
  if (names.length === 0) return resolved;
  if (depth >= MAX_DEPTH) return { ready: false, reason: 'FanOutTooDeep', message: `fan_out bodies nest deeper than ${MAX_DEPTH} Workflows (one names itself?)` };
  const bodies: Record<string, PinnedBody> = {};
  for (const name of names) {
    const body = lookup(namespace, name);
    if (!body)
      return {
        ready: false,
        reason: 'FanOutWorkflowNotFound',
        message: `fan_out names workflow: ${name}, and there is no Workflow ${name} in namespace ${namespace} (on a cluster a fan_out body is a Workflow, by name)`,
      };
    const inner = await withFanOutBodies(namespace, await resolve(body), lookup, resolve, depth + 1);
    if (!inner.ready) return { ready: false, reason: inner.reason, message: `fan_out body Workflow ${name}: ${inner.message}` };
    const { workflow, interpreter, script, runner } = inner.source;
    bodies[name] = { workflow, interpreter, script, runner: runner ?? null };
  }
  return { ready: true, source: { ...source, runner: { ...source.runner, [BODIES]: bodies } } };
}
