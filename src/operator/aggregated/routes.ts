import type { AuthorizationV1Api } from '@kubernetes/client-node';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ensureError } from '../../common/errors.js';
import { BODY_LIMIT, HttpError, utf8Body } from '../../server/http-error.js';
import { frontProxyUser, type FrontProxy, type FrontProxyUser } from './front-proxy.js';
import { AGGREGATED_GROUP, AGGREGATED_VERSION } from './group.js';
import { apiRequestOf, attributesOf, GATE_ANSWERS, PREFIX, UI_RESOURCE, type Attributes } from './request-path.js';

/**
 * People's verbs as an aggregated API, so kube-apiserver authenticates the person (whatever their
 * kubeconfig uses) and RBAC reads naturally: `kubectl auth can-i create runs/signal -n team-a`
 * (group api.hyperspool.dev). The operator's /v1 API is served here route for route, in the
 * namespace of the path (src/operator/aggregated/request-path.ts): a run by its Run's name, its
 * routes as subresources; a request is checked (front-proxy identity, then a SubjectAccessReview
 * on the attributes kube-apiserver itself authorized) and handed on as its /v1 request, already
 * authorized. A route added to the /v1 API needs nothing here, only a rule in the roles that grant it.
 */

/** The resources kubectl discovers (`kubectl api-resources`, `kubectl auth can-i`); any /v1 route is served, listed or not. */
const DISCOVERED: { name: string; kind: string; verbs: string[]; namespaced?: false }[] = [
  { name: 'runs', kind: 'RunRecord', verbs: ['get', 'list', 'create'] },
  { name: 'runs/log', kind: 'RunLog', verbs: ['get'] },
  { name: 'runs/journal', kind: 'RunJournal', verbs: ['get'] },
  // runs/NAME/artifacts lists them; runs/NAME/artifacts/ARTIFACT streams one (RBAC sees the subresource).
  { name: 'runs/artifacts', kind: 'RunArtifacts', verbs: ['get'] },
  { name: 'runs/timeline', kind: 'RunTimeline', verbs: ['get'] },
  { name: 'runs/shape', kind: 'RunShape', verbs: ['get'] },
  { name: 'runs/approvals', kind: 'RunApprovals', verbs: ['get'] },
  { name: 'runs/signal', kind: 'RunSignal', verbs: ['create'] },
  { name: 'runs/approve', kind: 'RunApproval', verbs: ['create'] },
  { name: 'runs/reject', kind: 'RunApproval', verbs: ['create'] },
  { name: 'runs/cancel', kind: 'RunCancel', verbs: ['create'] },
  { name: 'runs/rerun', kind: 'RunRerun', verbs: ['create'] },
  { name: 'events', kind: 'Event', verbs: ['create'] },
  { name: 'workflows', kind: 'WorkflowSummary', verbs: ['list'] },
  { name: 'handlers', kind: 'HandlerRecord', verbs: ['list'] },
  { name: 'schedules', kind: 'ScheduleRecord', verbs: ['list'] },
  { name: 'schedules/trigger', kind: 'ScheduleTrigger', verbs: ['create'] },
  { name: UI_RESOURCE, kind: 'UiFile', verbs: ['get'], namespaced: false },
];

export interface AggregatedOptions {
  /** The cluster's front-proxy settings; undefined while they could not be read. */
  frontProxy(): FrontProxy | undefined;
  authorization: AuthorizationV1Api;
  /** The run id of the Run of that name, or undefined when there is no such Run (yet). */
  runIdOf(namespace: string, name: string): Promise<string | undefined>;
}

/** The discovery document kube-apiserver reads (and checks the APIService's availability with). */
export function resourceList(): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: `${AGGREGATED_GROUP}/${AGGREGATED_VERSION}`,
    resources: DISCOVERED.map(({ name, kind, verbs, namespaced }) => ({ name, singularName: name.includes('/') ? '' : name.replace(/s$/, ''), namespaced: namespaced ?? true, kind, verbs })),
  };
}

// Whatever content type the client sent (kubectl create --raw sends none): the body is JSON.
const parseJson = express.json({ limit: BODY_LIMIT, type: () => true, verify: utf8Body });

/**
 * Express middleware for the aggregated paths; anything else goes on untouched. A checked request
 * leaves with `req.url` rewritten to the /v1 API and `res.locals.user` set, which the API's own
 * authorization takes as done.
 */
export function aggregatedApi(options: AggregatedOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.path.startsWith(`/apis/${AGGREGATED_GROUP}`)) return next();
    // Discovery is answered here; a verb is handed on (next) as its /v1 request.
    handle(req, res, options).then((answered) => (answered ? undefined : next()), next);
  };
}

async function handle(req: Request, res: Response, options: AggregatedOptions): Promise<boolean> {
  const rest = req.path.slice(PREFIX.length);
  if (req.path === `/apis/${AGGREGATED_GROUP}` || req.path === `/apis/${AGGREGATED_GROUP}/`) {
    const version = { groupVersion: `${AGGREGATED_GROUP}/${AGGREGATED_VERSION}`, version: AGGREGATED_VERSION };
    res.json({ kind: 'APIGroup', apiVersion: 'v1', name: AGGREGATED_GROUP, versions: [version], preferredVersion: version });
    return true;
  }
  if (!req.path.startsWith(PREFIX) || (rest !== '' && !rest.startsWith('/'))) throw status(404, 'NotFound', `the server could not find ${req.path}`);
  if (rest === '' || rest === '/') {
    res.json(resourceList());
    return true;
  }
  const attributes = attributesOf(req.method, rest);
  if (!attributes) throw status(404, 'NotFound', `the server could not find ${req.method} ${req.path}`);
  const { namespace } = attributes;
  if (attributes.resource === 'runs' && GATE_ANSWERS.has(attributes.subresource ?? '') && req.method !== 'POST') throw status(405, 'MethodNotAllowed', `${req.method} is not supported on runs/${attributes.subresource ?? ''}; use POST`);

  const proxy = options.frontProxy();
  if (!proxy) throw status(503, 'ServiceUnavailable', "the operator has not read the cluster's front-proxy settings yet (kube-system/extension-apiserver-authentication)");
  let user: FrontProxyUser;
  try {
    user = frontProxyUser(req, proxy);
  } catch (error) {
    throw status(401, 'Unauthorized', (error as Error).message);
  }
  await authorize(options.authorization, user, attributes);

  const query = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  query.delete('project');
  let body: Record<string, unknown> = {};
  if (namespace !== undefined && ['POST', 'PUT', 'PATCH'].includes(req.method)) {
    req.headers['content-type'] = 'application/json';
    await new Promise<void>((resolve, reject) => parseJson(req, res, (error?: unknown) => (error ? reject(ensureError(error)) : resolve())));
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw status(400, 'BadRequest', 'the body must be a JSON object');
    body = req.body as Record<string, unknown>;
    // The namespace in the path is the one RBAC was asked about: a body may not name another.
    if (body.project !== undefined && body.project !== namespace) throw status(400, 'BadRequest', `the body's project ${String(body.project)} is not the namespace ${namespace}`);
  }
  const named = attributes.resource === 'runs' && attributes.name !== undefined && namespace !== undefined;
  const runId = named ? await options.runIdOf(namespace, attributes.name ?? '') : undefined;
  if (named && !runId) throw status(404, 'NotFound', `runs.hyperspool.dev "${attributes.name ?? ''}" not found in namespace ${namespace}`);
  // A run's own routes take the project from its id; every other route is scoped to the namespace
  // (the UI's files, cluster-scoped, to nothing: they are nobody's data).
  if (!runId && namespace !== undefined) {
    query.set('project', namespace);
    body = { ...body, project: namespace };
  }
  const handed = apiRequestOf(attributes, runId, body);
  if (!handed) throw status(400, 'BadRequest', `'job' (the gate's job, a string) is required`);
  if (['POST', 'PUT', 'PATCH'].includes(req.method)) req.body = handed.body;
  const search = query.toString();
  req.url = `${handed.path}${search ? `?${search}` : ''}`;
  res.locals.user = user.username;
  // A gate's approvers may name a group the person is in (approval.approvers).
  res.locals.groups = user.groups;
  return false;
}

async function authorize(authorization: AuthorizationV1Api, user: FrontProxyUser, attributes: Attributes): Promise<void> {
  const { verb, resource, subresource, name, namespace } = attributes;
  const review = await authorization.createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        groups: user.groups,
        ...(user.uid ? { uid: user.uid } : {}),
        ...(Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
        resourceAttributes: { group: AGGREGATED_GROUP, verb, resource, ...(subresource ? { subresource } : {}), ...(name ? { name } : {}), ...(namespace ? { namespace } : {}) },
      },
    },
  });
  if (review.status?.allowed) return;
  const what = `${verb} ${resource}${subresource ? `/${subresource}` : ''}.${AGGREGATED_GROUP}${name ? ` ${name}` : ''}${namespace ? ` in namespace ${namespace}` : ''}`;
  throw status(403, 'Forbidden', `${user.username} may not ${what}${review.status?.reason ? `: ${review.status.reason}` : ''}`);
}

/**
 * An error as a Kubernetes Status: kubectl and client libraries print its message. The operator's
 * error handler answers HttpErrors in its own shape, so this one is answered here.
 */
class StatusError extends HttpError {}

function status(code: number, reason: string, message: string): StatusError {
  return new StatusError(code, reason, message);
}

/** Answers a StatusError as a metav1.Status, for the clients of an aggregated API. */
export function statusErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (!(error instanceof StatusError)) return next(error);
  res.status(error.status).json({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: error.message, reason: error.code, code: error.status });
}
