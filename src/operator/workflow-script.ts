import type { CoreV1Api } from '@kubernetes/client-node';
import type { Workflow } from './api/generated.js';
import { cachedFor } from './auth/ttl-cache.js';
import { httpStatus } from './kube/request-options.js';

/** A Workflow's script text, or why the operator cannot have it yet (a Ready=False reason). */
export type WorkflowScript =
  | { ok: true; script: string; from: string | null }
  | { ok: false; reason: 'ConfigMapNotFound' | 'ConfigMapKeyNotFound' | 'ConfigMapForbidden' | 'ScriptTooLarge'; message: string };

/** What a ConfigMap read answers: its keys, or that it is not there (or not ours to read). */
export type ConfigMapRead = { found: true; data: Record<string, string> } | { found: false; forbidden: boolean };

export type ReadConfigMap = (namespace: string, name: string) => Promise<ConfigMapRead>;

/** The same bound as spec.script: the script is copied into every run, so it stays small. */
export const MAX_SCRIPT_BYTES = 262_144;

/**
 * Reads ConfigMaps through the API server, each answer kept for `cacheMs`. A GET when asked,
 * rather than an informer: watching every ConfigMap of the cluster would hold them all in the
 * operator's memory for the few a Workflow names. The cache absorbs the sweep, which looks at
 * Pending Runs and Schedules every second; a ConfigMap created or edited is seen within `cacheMs`.
 */
export function configMapReader(core: CoreV1Api, cacheMs = 5_000): ReadConfigMap {
  const read = cachedFor(cacheMs, async (key): Promise<ConfigMapRead> => {
    const [namespace = '', name = ''] = key.split('/');
    try {
      const configMap = await core.readNamespacedConfigMap({ namespace, name });
      const binary = Object.fromEntries(Object.entries(configMap.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
      return { found: true, data: { ...binary, ...(configMap.data ?? {}) } };
    } catch (error) {
      const status = httpStatus(error);
      if (status === 404 || status === 403) return { found: false, forbidden: status === 403 };
      throw error;
    }
  });
  return (namespace, name) => read(`${namespace}/${name}`);
}

/** The Workflow's script: spec.script as it is, or the value of spec.scriptFrom's ConfigMap key. */
export async function workflowScript(workflow: Workflow, readConfigMap: ReadConfigMap): Promise<WorkflowScript> {
  const { script, scriptFrom } = workflow.spec;
  if (!scriptFrom) return { ok: true, script: script ?? '', from: null };
  const namespace = workflow.metadata.namespace ?? 'default';
  const { name, key } = scriptFrom.configMapKeyRef;
  const read = await readConfigMap(namespace, name);
  if (!read.found) {
    return read.forbidden
      ? { ok: false, reason: 'ConfigMapForbidden', message: `the operator may not read ConfigMap ${name} in namespace ${namespace} (its ClusterRole needs get on configmaps)` }
      : { ok: false, reason: 'ConfigMapNotFound', message: `ConfigMap ${name} not found in namespace ${namespace}` };
  }
  const text = read.data[key];
  if (text === undefined) {
    const keys = Object.keys(read.data).sort();
    return { ok: false, reason: 'ConfigMapKeyNotFound', message: `ConfigMap ${name} has no key ${key} (it has ${keys.length ? keys.join(', ') : 'none'})` };
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_SCRIPT_BYTES) {
    return { ok: false, reason: 'ScriptTooLarge', message: `ConfigMap ${name} key ${key} holds ${bytes} bytes; a script may have at most ${MAX_SCRIPT_BYTES}` };
  }
  return { ok: true, script: text, from: `ConfigMap ${name} key ${key}` };
}
