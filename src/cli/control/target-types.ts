// The shape of a target apart from target.ts, which loads the cluster's (cluster/kube-target.ts):
// that module implements Target, so it imports this one, not target.ts, and no cycle forms.

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
  /** Who to act as (--as): on a cluster through Kubernetes impersonation; on spool dev, as given. */
  as?: string;
}
