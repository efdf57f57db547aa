import { api, serverUrl } from './http.js';
import type { Target, TargetOptions } from './target-types.js';

export type { Target, TargetOptions } from './target-types.js';

/** A cluster when any kubeconfig option is given, else the server of --server or $SPOOL_SERVER. */
export function isCluster(options: TargetOptions): boolean {
  return options.kubeconfig !== undefined || options.context !== undefined || options.namespace !== undefined;
}

export async function targetOf(options: TargetOptions): Promise<Target> {
  if (isCluster(options)) {
    // Loaded only here: @kubernetes/client-node is a large import the other verbs never need.
    const { ClusterTarget } = await import('../cluster/kube-target.js');
    return new ClusterTarget(options);
  }
  const server = serverUrl(options.server);
  return {
    api: (method, path, body) => api(server, method, path, body, options.as),
    runId: (arg) => Promise.resolve(arg),
  };
}
