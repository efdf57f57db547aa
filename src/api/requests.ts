import { MAX_DURATION_MS } from '../common/duration.js';
import { NAME_RULE, PROJECT_RULE, STDERR_TAIL } from '../engine/request-schema.js';
import { RECORDED_INTERPRETERS } from '../common/workflow-file.js';
import type { FromSchema } from './from-schema.js';
import { RUN_SORTS } from './responses.js';

/**
 * Every route of the HTTP API with the body and query parameters it takes, described once: the
 * server checks each request against it before a route sees it (src/server/check-requests.ts:
 * unknown keys, types, bounds, the name rule, value sizes), and docs/api.md's field reference is
 * written from it (`npm run gen:docs`). A path the table knows with another method is a 405.
 */

const TEXT = { type: 'string', maxLength: 256, pattern: NAME_RULE.pattern } as const;
const NULLABLE = <const S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;
const ANY = { description: 'any JSON' } as const;
/** Query values arrive as text; the route reads a number from one and names it when it cannot. */
const WHOLE = (max: number) => ({ type: 'string', description: `a whole number, at most ${max}` }) as const;

/** A time in a query: ISO 8601, a date alone or with a time and a zone (`2026-12-06`, `2026-12-06T08:00:00Z`). */
const TIME_QUERY = (what: string) =>
  ({
    type: 'string',
    pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
    description: `${what}: a time, ISO 8601 with its zone (2026-12-06T08:00:00Z) or a date (UTC)`,
  }) as const;

/** The interpreters a script may name: the ones spool picks by file extension, and pipelines. */
export const INTERPRETERS = RECORDED_INTERPRETERS;

const SCRIPT_SOURCE = {
  workflow: { ...TEXT, description: 'the script file name, which names the workflow' },
  interpreter: { enum: INTERPRETERS },
  script: { type: 'string', description: 'the script text' },
  cwd: NULLABLE({ type: 'string', maxLength: 4096, description: 'an existing absolute directory (spool dev only)' }),
  project: NULLABLE(PROJECT_RULE),
} as const;

export interface Fields {
  required?: Record<string, object>;
  optional?: Record<string, object>;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Express path; each `:param` is checked by the name rule. */
  path: string;
  body?: Fields;
  query?: Fields;
  /** Body fields whose size counts against the recorded-value limit. */
  values?: readonly string[];
}

const project = { optional: { project: PROJECT_RULE } } as const;

export const API_ROUTES = [
  {
    method: 'POST',
    path: '/runs',
    body: {
      required: {
        workflow: SCRIPT_SOURCE.workflow,
        interpreter: SCRIPT_SOURCE.interpreter,
        script: SCRIPT_SOURCE.script,
      },
      optional: {
        cwd: SCRIPT_SOURCE.cwd,
        project: SCRIPT_SOURCE.project,
        input: ANY,
        idempotencyKey: NULLABLE({ type: 'string', minLength: 1, maxLength: 1024 }),
        throttle: NULLABLE({
          type: 'object',
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 1_000_000 },
            periodMs: { type: 'integer', minimum: 1, maximum: MAX_DURATION_MS },
            key: NAME_RULE,
          },
          required: ['key'],
          additionalProperties: false,
        }),
        lenient: { type: 'boolean' },
        checkout: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'a bundle uploaded with POST /v1/checkouts (spool submit --with DIR)' },
      },
    },
    values: ['script', 'input'],
  },
  {
    method: 'GET',
    path: '/runs',
    query: {
      optional: {
        status: { type: 'string', pattern: '^[a-z]+(,[a-z]+)*$', description: 'statuses, comma-separated' },
        limit: WHOLE(1000),
        project: PROJECT_RULE,
        workflow: TEXT,
        subject: TEXT,
        parent: TEXT,
        before: TEXT,
        q: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\x00-\\x1f\\x7f]*$', description: "text found, in any case, in a run's id, workflow, subject, input or outputs, or a step's label or an annotation" },
        since: TIME_QUERY('created at or after'),
        until: TIME_QUERY('created before'),
        sort: { enum: RUN_SORTS },
        counts: { enum: ['true', 'false'], description: 'true: the answer counts the runs found in each status' },
      },
    },
  },
  { method: 'GET', path: '/runs/:id' },
  {
    method: 'POST',
    path: '/runs/:id/rerun',
    body: {
      optional: {
        fromStep: NULLABLE({ ...NAME_RULE, description: "the step to rerun from: the old run's journal before its first call is kept; null: from the top" }),
        input: { description: "any JSON; by default the old run's input" },
        latest: { type: 'boolean', description: "the workflow file as it is now (spool dev: read where the run was submitted from), not the old run's script" },
      },
    },
    values: ['input'],
  },
  { method: 'POST', path: '/runs/:id/cancel', body: {} },
  { method: 'GET', path: '/runs/:id/logs', query: { optional: { after: WHOLE(Number.MAX_SAFE_INTEGER) } } },
  { method: 'GET', path: '/runs/:id/journal' },
  { method: 'GET', path: '/runs/:id/timeline' },
  { method: 'GET', path: '/runs/:id/artifacts' },
  { method: 'GET', path: '/runs/:id/artifacts/:name' },
  { method: 'GET', path: '/runs/:id/approvals' },
  { method: 'GET', path: '/runs/:id/shape' },
  {
    method: 'POST',
    path: '/runs/:id/signals',
    body: { required: { name: NAME_RULE }, optional: { payload: ANY } },
    values: ['payload'],
  },
  {
    method: 'POST',
    path: '/runs/:id/approvals/:job',
    body: {
      required: { decision: { enum: ['approve', 'reject'] } },
      optional: {
        via: { enum: ['cli', 'page', 'api'] },
        values: {
          type: 'object',
          propertyNames: NAME_RULE,
          additionalProperties: { type: ['string', 'number', 'boolean'] },
          description: "the approval form's fields",
        },
      },
    },
    values: ['values'],
  },
  { method: 'GET', path: '/workflows', query: project },
  { method: 'GET', path: '/workflows/:name', query: project },
  {
    method: 'GET',
    path: '/workflows/:name/stats',
    query: { optional: { ...project.optional, since: TIME_QUERY('the window\'s start (default: a day before until)'), until: TIME_QUERY('its end (default: now)') } },
  },
  {
    method: 'POST',
    path: '/events',
    body: {
      required: { type: NAME_RULE },
      optional: { id: NAME_RULE, subject: NULLABLE(NAME_RULE), payload: ANY, project: PROJECT_RULE },
    },
    values: ['payload'],
  },
  { method: 'GET', path: '/handlers', query: project },
  { method: 'GET', path: '/handlers/:name/events', query: { optional: { project: PROJECT_RULE, limit: WHOLE(100), before: WHOLE(Number.MAX_SAFE_INTEGER) } } },
  {
    method: 'PUT',
    path: '/handlers/:name',
    body: {
      required: {
        eventType: NAME_RULE,
        workflow: SCRIPT_SOURCE.workflow,
        interpreter: SCRIPT_SOURCE.interpreter,
        script: SCRIPT_SOURCE.script,
      },
      optional: { cwd: SCRIPT_SOURCE.cwd, project: SCRIPT_SOURCE.project },
    },
    values: ['script'],
  },
  { method: 'DELETE', path: '/handlers/:name', query: project },
  { method: 'GET', path: '/schedules', query: project },
  {
    method: 'PUT',
    path: '/schedules/:name',
    body: {
      required: {
        workflow: SCRIPT_SOURCE.workflow,
        interpreter: SCRIPT_SOURCE.interpreter,
        script: SCRIPT_SOURCE.script,
      },
      optional: {
        everyMs: NULLABLE({ type: 'integer', minimum: 1, maximum: MAX_DURATION_MS }),
        cron: NULLABLE({ type: 'string', minLength: 1, maxLength: 256 }),
        cwd: SCRIPT_SOURCE.cwd,
        project: SCRIPT_SOURCE.project,
      },
    },
    values: ['script'],
  },
  { method: 'DELETE', path: '/schedules/:name', query: project },
  { method: 'POST', path: '/schedules/:name/trigger', query: project, body: {} },
  { method: 'POST', path: '/schedules/:name/suspend', query: project, body: {} },
  { method: 'POST', path: '/schedules/:name/resume', query: project, body: {} },
  { method: 'GET', path: '/approvals/waiting', query: project },
  { method: 'GET', path: '/state/:entity', query: project },
  { method: 'GET', path: '/state/:entity/:key', query: project },
  {
    method: 'PUT',
    path: '/state/:entity/:key',
    body: { required: { value: { type: 'string' } }, optional: { project: PROJECT_RULE } },
    values: ['value'],
  },
  { method: 'DELETE', path: '/state/:entity/:key', query: project },
  // A pod's agent (docs/api.md, Agents); a call's body is a protocol request, checked by the engine.
  // A warm pod's agent asks for its pass first (a long poll).
  { method: 'GET', path: '/agent/assignment' },
  { method: 'GET', path: '/agent/runs/:run/passes/:pass' },
  { method: 'POST', path: '/agent/runs/:run/passes/:pass/calls', body: { optional: {} }, values: [] },
  // Output is bytes: a piece that is not plain text comes as textBase64 (src/common/output-bytes.ts).
  { method: 'POST', path: '/agent/runs/:run/passes/:pass/logs', body: { optional: { text: { type: 'string' }, textBase64: { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' } } } },
  {
    method: 'POST',
    path: '/agent/runs/:run/passes/:pass/exit',
    body: { required: { code: { type: ['integer', 'null'] }, signal: { type: ['string', 'null'], maxLength: 32 } } },
  },
  // An activity attempt's pod on a cluster reports its command's result (docs/operator.md).
  {
    method: 'POST',
    path: '/agent/runs/:run/activities/:name/attempts/:attempt',
    body: {
      required: { exitCode: { type: 'integer', minimum: 0, maximum: 255 } },
      optional: {
        // One of the two: the command's stdout as text, or its bytes as base64 where they are not
        // plain text (a NUL, bytes that are not UTF-8).
        stdout: { type: 'string' },
        stdoutBase64: { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' },
        // A failed attempt's: the end of its command's stderr, for people (never a wait's answer).
        stderrTail: STDERR_TAIL,
      },
    },
  },
] as const satisfies readonly ApiRoute[];

type Route = (typeof API_ROUTES)[number];
/** A route by its method and path, as `'POST /runs'`. */
export type RouteName = NameOf<Route>;
type NameOf<R> = R extends { method: infer Method extends string; path: infer Path extends string } ? `${Method} ${Path}` : never;
type Named<Name, R = Route> = R extends unknown ? (NameOf<R> extends Name ? R : never) : never;

/** The fields of a body or a query as one object type; every route also takes `project`. */
type FieldsType<F> = FromSchema<{
  type: 'object';
  properties: (F extends { required: infer Required } ? Required : unknown) &
    (F extends { optional: infer Optional } ? (Optional extends { project: unknown } ? Optional : Optional & { project: typeof PROJECT_RULE }) : { project: typeof PROJECT_RULE });
  required: readonly (F extends { required: infer Required } ? keyof Required : never)[];
  additionalProperties: false;
}>;

/** The body a route takes, as the server checks it (src/server/check-requests.ts). */
export type RequestOf<Name extends RouteName> = Named<Name> extends { body: infer F } ? FieldsType<F> : never;

