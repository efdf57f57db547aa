import { AGGREGATED_GROUP, AGGREGATED_VERSION } from '../../operator/aggregated/group.js';
import { projectOfRunId } from '../../common/ids.js';

/** The aggregated API's discovery document: 200 where kube-apiserver serves the group. */
export function aggregatedDiscoveryPath(): string {
  return `/apis/${AGGREGATED_GROUP}/${AGGREGATED_VERSION}`;
}

/** A request to the operator's aggregated API, through kube-apiserver. */
export interface AggregatedRequest {
  method: string;
  path: string;
  body?: unknown;
}

/**
 * The aggregated API request (api.hyperspool.dev, src/operator/aggregated/routes.ts) for a request
 * the CLI makes to the operator API, or null for the requests that have none (submit, runs,
 * handlers, schedules, state, which go on through the service proxy). A run is named by its Run,
 * in its own namespace, as RBAC knows it.
 */
export async function aggregatedRequest(
  method: string,
  path: string,
  body: unknown,
  namespace: string,
  runName: (runId: string) => Promise<string>,
): Promise<AggregatedRequest | null> {
  const [pathname = '', search = ''] = path.split('?');
  const query = new URLSearchParams(search);
  query.delete('project');
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const base = (ns: string): string => `/apis/${AGGREGATED_GROUP}/${AGGREGATED_VERSION}/namespaces/${encodeURIComponent(ns)}`;
  const withQuery = (target: string): string => (query.size > 0 ? `${target}?${query.toString()}` : target);

  if (method === 'POST' && parts.length === 1 && parts[0] === 'events') {
    const { project, ...event } = (body ?? {}) as Record<string, unknown>;
    return { method, path: `${base(typeof project === 'string' && project ? project : namespace)}/events`, body: event };
  }
  const [collection, runId, action, job, ...rest] = parts;
  if (method === 'GET' && collection === 'runs' && parts.length === 1) return { method, path: withQuery(`${base(namespace)}/runs`) };
  if (collection !== 'runs' || !runId || !runId.includes(':')) return null;
  const run = `${base(projectOfRunId(runId) || namespace)}/runs/${encodeURIComponent(await runName(runId))}`;
  if (method === 'GET' && !action) return { method, path: withQuery(run) };
  if (method === 'GET' && action === 'logs' && !job) return { method, path: withQuery(`${run}/log`) };
  if (method === 'GET' && action === 'journal' && !job) return { method, path: withQuery(`${run}/journal`) };
  if (method === 'GET' && action === 'artifacts') return { method, path: `${run}/artifacts${job ? `/${[job, ...rest].map(encodeURIComponent).join('/')}` : ''}` };
  if (method === 'POST' && action === 'cancel' && !job) return { method, path: `${run}/cancel`, body: {} };
  if (method === 'POST' && action === 'signals' && !job) return { method, path: `${run}/signal`, body };
  if (method === 'POST' && action === 'approvals' && job) {
    const { decision, values } = (body ?? {}) as { decision?: unknown; values?: unknown };
    // The form's values go too: the gate's job reads them, and its answers keep them.
    if (decision === 'approve' || decision === 'reject') return { method, path: `${run}/${decision}`, body: { job, ...(values === undefined ? {} : { values }) } };
  }
  return null;
}
