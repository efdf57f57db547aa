import { AGGREGATED_GROUP, AGGREGATED_VERSION } from './group.js';

/** The aggregated API's version prefix: `/apis/api.hyperspool.dev/v1alpha1`. */
export const PREFIX = `/apis/${AGGREGATED_GROUP}/${AGGREGATED_VERSION}`;

export type Verb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/**
 * What RBAC is asked about a request, read from its method and path exactly as kube-apiserver reads
 * them before it proxies the request here (its RequestInfo), so the operator's own check and
 * kube-apiserver's agree: `namespaces/NS/RESOURCE/NAME/SUBRESOURCE/...`, a GET with a name is `get`
 * and without one `list`, POST `create`, PUT `update`, PATCH `patch`, DELETE `delete` (without a
 * name `deletecollection`). Anything after the subresource is part of the request, not of RBAC.
 */
export interface Attributes {
  verb: Verb;
  resource: string;
  subresource?: string;
  name?: string;
  /** Absent for the cluster-scoped `ui`. */
  namespace?: string;
  /** The path after the subresource (an artifact's name, an approval's job), decoded. */
  rest: string[];
}

/**
 * The operator API's collections that are not people's: the pods' calls (their own service
 * account tokens, src/operator/auth) and checkout bundles. Every other /v1 route is served here
 * as it is, without wiring of its own: RBAC decides on the attributes above.
 */
export const NOT_PEOPLE = new Set(['agent', 'checkouts']);

/**
 * The UI's files, as the one cluster-scoped resource: `ui/index.html` (every page: it routes in the
 * browser) and `ui/ASSET`. Static and the same for everyone, so config/rbac lets every
 * authenticated user get them (hyperspool-ui), and a person without rights sees the page say so.
 */
export const UI_RESOURCE = 'ui';
export const UI_INDEX = 'index.html';

const METHOD_VERBS: Record<string, { named: Verb; collection: Verb }> = {
  GET: { named: 'get', collection: 'list' },
  POST: { named: 'create', collection: 'create' },
  PUT: { named: 'update', collection: 'update' },
  PATCH: { named: 'patch', collection: 'patch' },
  DELETE: { named: 'delete', collection: 'deletecollection' },
};

/** The attributes of a request under PREFIX (`rest`: the path after it), or null when it names nothing this API serves. */
export function attributesOf(method: string, rest: string): Attributes | null {
  const verbs = METHOD_VERBS[method];
  if (!verbs) return null;
  let parts: string[];
  try {
    parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return null;
  }
  if (parts[0] === UI_RESOURCE) {
    const [, name, ...more] = parts;
    return method === 'GET' && name && more.length === 0 ? { verb: 'get', resource: UI_RESOURCE, name, rest: [] } : null;
  }
  const [namespaces, namespace, resource, name, subresource, ...after] = parts;
  if (namespaces !== 'namespaces' || !namespace || !resource || NOT_PEOPLE.has(resource) || resource === UI_RESOURCE) return null;
  return {
    verb: name ? verbs.named : verbs.collection,
    resource,
    ...(subresource ? { subresource } : {}),
    ...(name ? { name } : {}),
    namespace,
    rest: after,
  };
}

/**
 * The run routes' subresources whose names here differ from the /v1 API's, as the CLI and the
 * roles named them first (`runs/log`, `runs/signal`). approve and reject are answers to a gate the
 * body names ({job}). Any other subresource is the /v1 route of the same name (runs/timeline,
 * runs/shape, runs/approvals, runs/rerun...).
 */
export const RUN_ALIASES: Record<string, string> = { log: 'logs', signal: 'signals' };
export const GATE_ANSWERS = new Set(['approve', 'reject']);

/**
 * The /v1 request of an aggregated one (its path, without the query, and its body): a run's routes
 * by its run id (`runId`, found from the Run's name), everything else as it is named. An answer to
 * a gate names the gate in its body (`{job, values}`), which becomes the approvals route's
 * `{decision, values}`; without a job it is null.
 */
export function apiRequestOf(attributes: Attributes, runId: string | undefined, body: Record<string, unknown>): { path: string; body: Record<string, unknown> } | null {
  if (attributes.resource === 'runs' && GATE_ANSWERS.has(attributes.subresource ?? '')) {
    const { job, ...answer } = body;
    if (typeof job !== 'string' || !job) return null;
    // The rest as it came (values, via), so the approvals route checks it as it checks any answer.
    return { path: apiPathOf({ ...attributes, subresource: 'approvals', rest: [job] }, runId), body: { ...answer, decision: attributes.subresource } };
  }
  return { path: apiPathOf(attributes, runId), body };
}

function apiPathOf(attributes: Attributes, runId: string | undefined): string {
  const { resource, name, subresource, rest } = attributes;
  if (resource === UI_RESOURCE) return name === UI_INDEX ? '/' : `/assets/${encodeURIComponent(name ?? '')}`;
  if (resource !== 'runs') return `/v1/${[resource, ...[name, subresource, ...rest].filter((part) => part !== undefined).map(decodedOnceMore)].map(encodeURIComponent).join('/')}`;
  const segments = [resource];
  if (name) segments.push(runId ?? name);
  if (subresource) segments.push(RUN_ALIASES[subresource] ?? subresource);
  // One segment, as the routes take it: an artifact's name may hold slashes.
  if (rest.length > 0) segments.push(rest.join('/'));
  return `/v1/${segments.map(encodeURIComponent).join('/')}`;
}

/**
 * A segment of a path not of a run, as the /v1 route takes it: encoded once more than the path
 * (src/cli/cluster/aggregated-path.ts says why), so what kube-apiserver read as the name
 * (`release%2Frelease.yaml`) is the workflow `release/release.yaml`. One that does not decode is
 * taken as it is (and found by no route).
 */
function decodedOnceMore(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
