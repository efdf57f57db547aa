import { AGGREGATED_GROUP, AGGREGATED_VERSION } from '../../operator/aggregated/group.js';
import { GATE_ANSWERS, NOT_PEOPLE, PREFIX, RUN_ALIASES, UI_INDEX, UI_RESOURCE } from '../../operator/aggregated/request-path.js';
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

/** The aggregated subresource of a /v1 run route: the names the roles give them first (runs/log, runs/signal). */
const SUBRESOURCES = Object.fromEntries(Object.entries(RUN_ALIASES).map(([subresource, route]) => [route, subresource]));

/**
 * The aggregated API request (api.hyperspool.dev, src/operator/aggregated) for a request the CLI
 * or the web UI makes to the operator's /v1 API, or null for the routes that are not people's
 * (checkouts, which go on through the service proxy). A run is named by its Run, in its own
 * namespace, as RBAC knows it; every other route is in the namespace its `project` names (in the
 * query or the body), else the CLI's.
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
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [collection = '', id, route, ...rest] = parts;
  if (!collection || NOT_PEOPLE.has(collection)) return null;
  const { project, ...fields } = isObject(body) ? body : {};
  const withQuery = (target: string): string => {
    query.delete('project');
    return query.size > 0 ? `${target}?${query.toString()}` : target;
  };
  const base = (ns: string): string => `${PREFIX}/namespaces/${encodeURIComponent(ns)}`;
  const sent = body === undefined ? {} : { body: isObject(body) ? fields : body };

  if (collection !== 'runs' || !id?.includes(':')) {
    const ns = (typeof project === 'string' && project) || query.get('project') || namespace;
    return { method, path: withQuery(`${base(ns)}/${[encodeURIComponent(collection), ...parts.slice(1).map(encodeTwice)].join('/')}`), ...sent };
  }
  const run = `${base(projectOfRunId(id) || namespace)}/runs/${encodeURIComponent(await runName(id))}`;
  // A gate's answer is approve or reject, as RBAC tells them apart; the gate's job goes in the body.
  if (method === 'POST' && route === 'approvals' && rest.length === 1 && GATE_ANSWERS.has(String(fields.decision))) {
    const { decision, ...answer } = fields;
    return { method, path: withQuery(`${run}/${String(decision)}`), body: { job: rest[0], ...answer } };
  }
  // What follows the subresource (an artifact's name, which may hold slashes) goes as path segments, as kubectl's would.
  const tail = route === undefined ? [] : [SUBRESOURCES[route] ?? route, ...rest.join('/').split('/').filter(Boolean)];
  return { method, path: withQuery([run, ...tail.map(encodeURIComponent)].join('/')), ...sent };
}

/**
 * A name's segment, encoded once more than a path's: kube-apiserver decodes the path before it reads
 * and proxies it, so a `/` in a name (a workflow's on a cluster is NAME/FILE, a state key may hold
 * one) would become a separator there. The operator decodes them once more (request-path.ts,
 * apiPathOf). A run's segments are not: its Run's name cannot hold one, and an artifact's, last, may.
 */
const encodeTwice = (part: string): string => encodeURIComponent(encodeURIComponent(part));

/** The aggregated path of one of the web UI's files: its assets by name, and every page as the one index.html. */
export function uiFilePath(pathname: string): string {
  const asset = /^\/assets\/([^/]+)$/.exec(pathname)?.[1];
  return `${PREFIX}/${UI_RESOURCE}/${asset ?? UI_INDEX}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
