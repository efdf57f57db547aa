import type { AuthorizationV1Api } from '@kubernetes/client-node';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ensureError } from '../../common/errors.js';
import { BODY_LIMIT, HttpError, utf8Body } from '../../server/http-error.js';
import { frontProxyUser, type FrontProxy, type FrontProxyUser } from './front-proxy.js';
import { AGGREGATED_GROUP, AGGREGATED_VERSION } from './group.js';

/**
 * People's verbs as an aggregated API, so kube-apiserver authenticates the person (whatever their
 * kubeconfig uses) and RBAC reads naturally: `kubectl auth can-i create runs/signal -n team-a`
 * (group api.hyperspool.dev). Each verb is a subresource of a Run, named as its Run is; a request
 * is checked (front-proxy identity, then a SubjectAccessReview on that subresource) and handed on
 * to the operator's own HTTP API as the matching /v1 request, already authorized.
 */
const PREFIX = `/apis/${AGGREGATED_GROUP}/${AGGREGATED_VERSION}`;

/** What each subresource is, for discovery and for the request it becomes. */
const RUN_VERBS: Record<string, { verb: 'get' | 'create'; method: 'GET' | 'POST'; kind: string }> = {
  log: { verb: 'get', method: 'GET', kind: 'RunLog' },
  journal: { verb: 'get', method: 'GET', kind: 'RunJournal' },
  // runs/NAME/artifacts lists them; runs/NAME/artifacts/ARTIFACT streams one (RBAC sees the subresource).
  artifacts: { verb: 'get', method: 'GET', kind: 'RunArtifacts' },
  signal: { verb: 'create', method: 'POST', kind: 'RunSignal' },
  approve: { verb: 'create', method: 'POST', kind: 'RunApproval' },
  reject: { verb: 'create', method: 'POST', kind: 'RunApproval' },
  cancel: { verb: 'create', method: 'POST', kind: 'RunCancel' },
};

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
    resources: [
      { name: 'runs', singularName: 'run', namespaced: true, kind: 'RunRecord', verbs: ['get', 'list'] },
      ...Object.entries(RUN_VERBS).map(([sub, { verb, kind }]) => ({ name: `runs/${sub}`, singularName: '', namespaced: true, kind, verbs: [verb] })),
      { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['create'] },
    ],
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
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  const [namespaces, namespace = '', resource, name, sub, ...extra] = parts;
  if (namespaces !== 'namespaces' || !namespace || (extra.length > 0 && sub !== 'artifacts')) throw status(404, 'NotFound', `the server could not find ${req.path}`);

  let attributes: { resource: string; subresource?: string; verb: 'get' | 'list' | 'create'; name?: string };
  if (resource === 'events' && !name) attributes = { resource: 'events', verb: 'create' };
  // The runs the store holds in the namespace, those whose Run resource is gone among them.
  else if (resource === 'runs' && !name) attributes = { resource: 'runs', verb: 'list' };
  else if (resource === 'runs' && name && !sub) attributes = { resource: 'runs', verb: 'get', name };
  else if (resource === 'runs' && name && sub && RUN_VERBS[sub]) attributes = { resource: 'runs', subresource: sub, verb: RUN_VERBS[sub].verb, name };
  else throw status(404, 'NotFound', `the server could not find ${req.path}`);
  const method = attributes.verb === 'create' ? 'POST' : 'GET';
  if (req.method !== method) throw status(405, 'MethodNotAllowed', `${req.method} is not supported on ${attributes.resource}${attributes.subresource ? `/${attributes.subresource}` : ''}; use ${method}`);

  const proxy = options.frontProxy();
  if (!proxy) throw status(503, 'ServiceUnavailable', "the operator has not read the cluster's front-proxy settings yet (kube-system/extension-apiserver-authentication)");
  let user: FrontProxyUser;
  try {
    user = frontProxyUser(req, proxy);
  } catch (error) {
    throw status(401, 'Unauthorized', (error as Error).message);
  }
  await authorize(options.authorization, user, { ...attributes, namespace });

  if (method === 'POST') req.headers['content-type'] = 'application/json';
  if (method === 'POST') await new Promise<void>((resolve, reject) => parseJson(req, res, (error?: unknown) => (error ? reject(ensureError(error)) : resolve())));
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw status(400, 'BadRequest', 'the body must be a JSON object');
  // The namespace in the path is the one RBAC was asked about: a body may not name another.
  if (body.project !== undefined && body.project !== namespace) throw status(400, 'BadRequest', `the body's project ${String(body.project)} is not the namespace ${namespace}`);

  const query = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  query.delete('project');
  let target: string;
  if (attributes.resource === 'events') {
    req.body = { ...body, project: namespace };
    target = '/v1/events';
  } else if (attributes.verb === 'list') {
    query.set('project', namespace);
    target = '/v1/runs';
  } else {
    const runId = await options.runIdOf(namespace, attributes.name ?? '');
    if (!runId) throw status(404, 'NotFound', `runs.hyperspool.dev "${attributes.name ?? ''}" not found in namespace ${namespace}`);
    const run = `/v1/runs/${encodeURIComponent(runId)}`;
    switch (attributes.subresource) {
      case undefined:
        target = run;
        break;
      case 'log':
        target = `${run}/logs`;
        break;
      case 'journal':
        target = `${run}/journal`;
        break;
      case 'artifacts':
        target = `${run}/artifacts${extra.length > 0 ? `/${encodeURIComponent(extra.join('/'))}` : ''}`;
        break;
      case 'signal':
        target = `${run}/signals`;
        break;
      case 'cancel':
        target = `${run}/cancel`;
        break;
      default: {
        // approve and reject: the gate is named in the body.
        const job = body.job;
        if (typeof job !== 'string' || !job) throw status(400, 'BadRequest', `'job' (the gate's job, a string) is required`);
        // With the form's values, which the gate checks as it does any answer's.
        req.body = { decision: attributes.subresource, ...(body.values === undefined ? {} : { values: body.values }) };
        target = `${run}/approvals/${encodeURIComponent(job)}`;
      }
    }
  }
  const search = query.toString();
  req.url = `${target}${search ? `?${search}` : ''}`;
  res.locals.user = user.username;
  // A gate's approvers may name a group the person is in (approval.approvers).
  res.locals.groups = user.groups;
  return false;
}

async function authorize(
  authorization: AuthorizationV1Api,
  user: FrontProxyUser,
  attributes: { resource: string; subresource?: string; verb: string; name?: string; namespace: string },
): Promise<void> {
  const review = await authorization.createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        groups: user.groups,
        ...(user.uid ? { uid: user.uid } : {}),
        ...(Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
        resourceAttributes: { group: AGGREGATED_GROUP, ...attributes },
      },
    },
  });
  if (review.status?.allowed) return;
  const what = `${attributes.verb} ${attributes.resource}${attributes.subresource ? `/${attributes.subresource}` : ''}.${AGGREGATED_GROUP}${attributes.name ? ` ${attributes.name}` : ''} in namespace ${attributes.namespace}`;
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
