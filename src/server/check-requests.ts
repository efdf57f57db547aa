import { Ajv, type ValidateFunction } from 'ajv';
import { onFirstUse } from '../common/on-first-use.js';
import type { NextFunction, Request, Response } from 'express';
import { API_ROUTES, type ApiRoute, type Fields } from '../api/requests.js';
import { checkValueSize, maxValueBytes } from '../engine/limits.js';
import { jsonValueProblem } from '../common/json-text.js';
import { NAME_RULE, NUL_MESSAGE, PROJECT_RULE, describeError, fieldWithNul } from '../engine/request-schema.js';
import { HttpError, badRequest } from './http-error.js';

/** The server's side of src/api/requests.ts: each /v1 request checked against its route before the route runs. */

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });

/**
 * Every route takes `project`, in its query and in its body: the project a request is about,
 * which on a cluster is the namespace (the cluster CLI sends it with every request).
 */
const withProject = (fields: Fields): Fields => ({
  ...fields,
  optional: { project: PROJECT_RULE, ...fields.optional },
});

const objectSchema = (fields: Fields, open = false): object => ({
  type: 'object',
  properties: { ...fields.required, ...fields.optional },
  required: Object.keys(fields.required ?? {}),
  ...(open ? {} : { additionalProperties: false }),
});

interface CompiledRoute {
  route: ApiRoute;
  pattern: RegExp;
  params: string[];
  body?: () => ValidateFunction;
  query: () => ValidateFunction;
}

const compiled: CompiledRoute[] = API_ROUTES.map((route: ApiRoute) => {
  const params: string[] = [];
  const source = route.path.replace(/:(\w+)/g, (_, name: string) => {
    params.push(name);
    return '([^/]+)';
  });
  // The calls route carries a protocol request, whose own schema the engine checks.
  const openBody = route.path.endsWith('/calls');
  const { body } = route;
  return {
    route,
    pattern: new RegExp(`^${source}/?$`),
    params,
    // Compiled when the route is first asked for: a server answers a few of its routes' dozens.
    ...(body ? { body: onFirstUse(() => ajv.compile(objectSchema(withProject(body), openBody))) } : {}),
    query: onFirstUse(() => ajv.compile(objectSchema(withProject(route.query ?? {})))),
  };
});
const checkName = ajv.compile(NAME_RULE);

/** Reads a path parameter as Express will; a malformed escape is a bad request, not a 500. */
function decoded(raw: string, name: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`'${name}' in the path is not valid percent-encoding`);
  }
}

const label = (route: ApiRoute): string => `${route.method} /v1${route.path}`;

/**
 * Checks a /v1 request against API_ROUTES before any route runs; a path no route has falls
 * through to the 404.
 */
export function checkApiRequests(req: Request, _res: Response, next: NextFunction): void {
  const path = req.path;
  const matching = compiled.filter((entry) => entry.pattern.test(path));
  if (matching.length === 0) return next();
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const entry = matching.find((candidate) => candidate.route.method === method);
  if (!entry) {
    const allowed = matching.map((candidate) => candidate.route.method);
    _res.setHeader('Allow', allowed.join(', '));
    throw new HttpError(
      405,
      'method_not_allowed',
      `${req.method} is not allowed on /v1${path}; use ${allowed.join(' or ')}`,
    );
  }
  const values = entry.pattern.exec(path)?.slice(1) ?? [];
  entry.params.forEach((name, index) => {
    const value = decoded(values[index] ?? '', name);
    if (!checkName(value))
      throw badRequest(
        `'${name}' in the path ${describeError(null, checkName.errors?.[0]).replace(/^the value /, '')}`,
      );
  });
  const query = entry.query();
  if (!query(req.query)) throw badRequest(`query: ${describeError(label(entry.route), query.errors?.[0])}`);
  const body: unknown = req.body ?? {};
  const checkBody = entry.body?.();
  if (checkBody) {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('the request body must be a JSON object');
    const problem = jsonValueProblem(body);
    if (problem !== null) throw badRequest(problem);
    if (!checkBody(body)) throw badRequest(describeError(label(entry.route), checkBody.errors?.[0]));
    const nul = fieldWithNul(body);
    if (nul !== null) throw badRequest(NUL_MESSAGE(nul));
    const limit = maxValueBytes();
    for (const field of entry.route.values ?? []) {
      try {
        checkValueSize(`'${field}'`, (body as Record<string, unknown>)[field], limit);
      } catch (error) {
        throw new HttpError(413, 'too_large', (error as Error).message);
      }
    }
  }
  next();
}
