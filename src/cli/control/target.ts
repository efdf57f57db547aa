import { api, serverUrl } from './http.js';

/** What the control verbs talk to: a `spool dev` server, or a cluster's operator (src/cli/cluster). */
export interface Target {
  /** One call to the HTTP API (paths below /v1). */
  api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** The run id a person's argument names: the id itself, or on a cluster a Run resource's name. */
  runId(arg: string): Promise<string>;
}

export interface TargetOptions {
  server?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  operator?: string;
}

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
    api: (method, path, body) => api(server, method, path, body),
    runId: (arg) => Promise.resolve(arg),
  };
}
