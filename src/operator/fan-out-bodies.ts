import { parseGraph } from '../graph/parse.js';
import { parsePipeline } from '../pipeline/parse.js';
import { GRAPH, interpreterOf, runsInProcess } from '../common/workflow-file.js';
import { BODIES, type PinnedBody } from '../pipeline/pinned-bodies.js';
import type { Workflow } from './api/generated.js';
import type { ScriptSource } from '../store/types.js';
import type { ResolvedSource } from './workflow-source.js';
import type { ReadConfigMap } from './workflow-script.js';

/** Bodies inside bodies (a body that fans out itself) are pinned too, this deep at most. */
const MAX_DEPTH = 4;

/**
 * The files of the parent's own bundle (its Workflow's checkoutFrom ConfigMap): a body's text by
 * file name, or null; `where` names the bundle in messages. Null when the Workflow names none.
 */
export interface BundleFiles {
  where: string;
  read(file: string): Promise<string | null>;
}

/**
 * A pipeline run on a cluster fans out to other Workflows or to files of its own bundle, never to
 * the operator's filesystem, which is nobody's checkout. So when a run's source is resolved (as
 * the run is admitted, or a Handler or Schedule takes its Workflow), each `fan_out: workflow:
 * <name>` is read from the Workflow of that name in the same namespace or, failing that, from the
 * file of that name in the parent Workflow's checkoutFrom ConfigMap (run like the parent, in its
 * pods); its script and pod settings are kept with the run: every item runs the body as it was
 * when the parent started, whatever edits come later. A body that does not exist (yet) keeps the
 * parent from starting, saying which.
 */
export async function withFanOutBodies(
  namespace: string,
  resolved: ResolvedSource,
  lookup: (namespace: string, name: string) => Workflow | null,
  resolve: (workflow: Workflow) => Promise<{ resolved: ResolvedSource; bundle: BundleFiles | null }>,
  bundle: BundleFiles | null = null,
  depth = 0,
): Promise<ResolvedSource> {
  if (!resolved.ready || !runsInProcess(resolved.source)) return resolved;
  const { source } = resolved;
  let names: string[];
  try {
    names = [...new Set(bodyNames(source))];
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
    const found = body ? await resolve(body) : await bundleBody(name, source, bundle);
    if (!found)
      return {
        ready: false,
        reason: 'FanOutWorkflowNotFound',
        message: `fan_out names workflow: ${name}, and there is no Workflow ${name} in namespace ${namespace}${bundle ? ` nor a file ${fileName(name)} in ${bundle.where}` : ''} (on a cluster a fan_out body is a Workflow, by name, or a file of the Workflow's checkoutFrom)`,
      };
    const inner = await withFanOutBodies(namespace, found.resolved, lookup, resolve, found.bundle, depth + 1);
    if (!inner.ready) return { ready: false, reason: inner.reason, message: `fan_out body Workflow ${name}: ${inner.message}` };
    const { workflow, interpreter, script, runner } = inner.source;
    bodies[name] = { workflow, interpreter, script, runner: runner ?? null };
  }
  return { ready: true, source: { ...source, runner: { ...source.runner, [BODIES]: bodies } } };
}

/** The Workflows a document starts by name: a pipeline's fan_out bodies, a graph's call nodes. */
function bodyNames(source: ScriptSource): string[] {
  if (source.interpreter === GRAPH) {
    return parseGraph(source.script, source.workflow).nodes.flatMap((node) =>
      node.type === 'call' && typeof node.config.workflow === 'string' ? [node.config.workflow] : [],
    );
  }
  return parsePipeline(source.script, source.workflow).jobs.flatMap((job) => (job.fanOut?.workflow ? [job.fanOut.workflow] : []));
}

/** `./probe.sh` names the bundle's `probe.sh`: a ConfigMap's keys are file names, without directories. */
const fileName = (name: string): string => name.replace(/^\.\//, '');

/** A body that is a file of the parent's bundle: run like the parent (its pods), from the same bundle. */
async function bundleBody(
  name: string,
  parent: ScriptSource,
  bundle: BundleFiles | null,
): Promise<{ resolved: ResolvedSource; bundle: BundleFiles | null } | null> {
  const script = bundle ? await bundle.read(fileName(name)) : null;
  if (script === null) return null;
  const file = fileName(name);
  const interpreter = interpreterOf(file, script);
  return { resolved: { ready: true, source: { ...parent, workflow: `${parent.workflow.split('/')[0] ?? ''}/${file}`, interpreter, script } }, bundle };
}

/** The files of a Workflow's checkoutFrom ConfigMap, read through the operator's ConfigMap reader. */
export function checkoutBundle(workflow: Workflow, readConfigMap: ReadConfigMap): BundleFiles | null {
  const name = workflow.spec.checkoutFrom?.configMapRef.name;
  if (!name) return null;
  const namespace = workflow.metadata.namespace ?? 'default';
  return {
    where: `ConfigMap ${name} (its checkoutFrom)`,
    read: async (file) => {
      const read = await readConfigMap(namespace, name);
      return read.found && Object.hasOwn(read.data, file) ? (read.data[file] ?? null) : null;
    },
  };
}
