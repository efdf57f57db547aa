import type { CoreV1Api } from '@kubernetes/client-node';
import { cachedFor } from '../auth/ttl-cache.js';
import { httpStatus } from '../kube/request-options.js';

/**
 * The annotation on a Namespace that caps how many passes of its runs run at once, below the
 * operator's own `--max-running-passes`: a team sets it on its namespace so its burst of waking
 * runs cannot take every pass slot of the node (or of the cluster's operator).
 */
export const PASS_QUOTA_ANNOTATION = 'hyperspool.dev/max-running-passes';

/**
 * The namespace's quota (undefined: none), read with a GET kept for `cacheMs`, like ConfigMaps
 * (workflow-script.ts): the executor asks at every dispatch, and an informer on every Namespace
 * would hold them all for the few that set it. A value that is not a whole number of at least 1 is
 * reported once through `invalid` and ignored.
 */
export function passQuotaReader(core: CoreV1Api, invalid: (namespace: string, value: string) => void, cacheMs = 5_000): (namespace: string) => Promise<number | undefined> {
  const said = new Set<string>();
  return cachedFor(cacheMs, async (namespace): Promise<number | undefined> => {
    let value: string | undefined;
    try {
      value = (await core.readNamespace({ name: namespace })).metadata?.annotations?.[PASS_QUOTA_ANNOTATION];
    } catch (error) {
      // A namespace going away, or not ours to read: no quota but the operator's own.
      if (httpStatus(error) === 404 || httpStatus(error) === 403) return undefined;
      throw error;
    }
    if (value === undefined) return undefined;
    const quota = Number(value);
    if (Number.isInteger(quota) && quota >= 1) return quota;
    if (!said.has(`${namespace}=${value}`)) invalid(namespace, value);
    said.add(`${namespace}=${value}`);
    return undefined;
  });
}
