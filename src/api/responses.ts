import type { FromSchema } from './from-schema.js';

/**
 * What each route of the HTTP API answers, declared once as the JSON Schema of its body, with its
 * TypeScript type derived from it: the server's routes are typed with these (a route that answers
 * another shape fails tsc), the control CLI and the web UI read them, test/api/responses.test.ts
 * checks the server's real answers against the schemas, and docs/api.md lists their fields
 * (`npm run gen:docs`). Every object is closed and lists every field it always has, so a field
 * added, dropped or retyped fails that test. Plain objects only: the UI bundles this file.
 */

/** An object whose `required` fields are always there and `optional` ones may be left out; no others. */
const shape = <const Required extends object, const Optional extends object = object>(
  required: Required,
  optional?: Optional,
) =>
  ({
    type: 'object',
    properties: { ...required, ...optional } as Required & Optional,
    required: Object.keys(required) as (keyof Required & string)[],
    additionalProperties: false,
  }) as const;

/** A shape with a name, which docs/api.md lists once and names wherever an answer holds it. */
const named = <const S extends object>(title: string, schema: S) => ({ title, ...schema }) as const;
const nullable = <const S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;
const listOf = <const S extends object>(items: S) => ({ type: 'array', items }) as const;

const TEXT = { type: 'string' } as const;
const WHOLE = { type: 'integer' } as const;
const TIME = { type: 'string', description: 'ISO 8601, UTC' } as const;
const ANY = { description: 'any JSON' } as const;
const TEXTS = { type: 'object', additionalProperties: TEXT } as const;
const DELETED = shape({ deleted: { type: 'string', description: 'the name deleted' } });
const OK = shape({ ok: { const: true } });

export const RUN_STATUSES = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/**
 * The orders of the runs list (`GET /v1/runs?sort=`): by creation (newest first, the default), last
 * change or duration (finished minus created; a run still going counts as the longest); `-` is descending.
 */
export const RUN_SORTS = ['-created', 'created', '-updated', 'updated', '-duration', 'duration'] as const;
export type RunSort = (typeof RUN_SORTS)[number];

const RUN_FIELDS = {
  id: TEXT,
  status: { enum: RUN_STATUSES },
  awaiting: nullable(TEXT),
  wait: nullable({ type: 'object', description: 'what a waiting run waits for: its kind and what of it' }),
  passes: WHOLE,
  error: nullable(TEXT),
  project: TEXT,
  workflow: TEXT,
  interpreter: TEXT,
  input: ANY,
  subject: nullable(TEXT),
  parentId: nullable(TEXT),
  handler: nullable(TEXT),
  idempotencyKey: nullable(TEXT),
  wakeAt: nullable(TIME),
  outputs: TEXTS,
  lenient: { type: 'boolean' },
  cwd: nullable(TEXT),
  runner: nullable({ type: 'object', description: "on a cluster, the Workflow's image, env and service account" }),
  rerunOf: nullable(
    named('RerunOf', shape({ runId: { type: 'string', description: 'the run this one reran' }, fromStep: nullable({ type: 'string', description: 'the step it reran from; null: from the top' }) })),
  ),
  submittedBy: nullable({ type: 'string', description: 'who submitted it through the API, where the server knew (a gate with approvers refuses their approval); null for runs a handler, schedule, parent or Run resource started' }),
  createdAt: TIME,
  updatedAt: TIME,
  finishedAt: nullable(TIME),
  substate: nullable({
    enum: ['queued', 'awaiting_lease', 'awaiting_timer', 'awaiting_signal', 'awaiting_event', 'awaiting_activity', 'awaiting_children'],
  }),
} as const;

/** A Run resource: what `kubectl get run NAME -n NAMESPACE` names. */
const RUN_RESOURCE = named('RunResource', shape({ name: TEXT, namespace: TEXT }));
export type RunResource = FromSchema<typeof RUN_RESOURCE>;
const RUN_OPTIONAL = {
  resource: { ...RUN_RESOURCE, description: 'on a cluster, the Run resource of this run, which people name it by; absent where it has none (spool dev, a run whose Run was deleted)' },
} as const;

/** A run as every route shows it, without its script. */
export const RUN = named('Run', shape(RUN_FIELDS, RUN_OPTIONAL));
export type Run = FromSchema<typeof RUN>;
/** One run, asked for by its id: with its script, and the runs that reran it. */
const RUN_WITH_SCRIPT = named('RunWithScript', shape({ ...RUN_FIELDS, script: TEXT, reruns: listOf({ type: 'string', description: 'the runs that reran this one, oldest first' }) }, RUN_OPTIONAL));
export type RunWithScript = FromSchema<typeof RUN_WITH_SCRIPT>;

const LOG_LINE = named(
  'LogLine',
  shape(
    { seq: WHOLE, pass: WHOLE, text: { type: 'string', description: 'UTF-8, with a byte that is not text as U+FFFD' }, at: TIME },
    { base64: { type: 'string', description: 'the exact bytes, where they are not plain text' } },
  ),
);
export type LogLine = FromSchema<typeof LOG_LINE>;

const JOURNAL_ENTRY = named('JournalEntry', shape({
  runId: TEXT,
  position: WHOLE,
  kind: { enum: ['call', 'result'] },
  verb: TEXT,
  name: TEXT,
  occurrence: WHOLE,
  data: { type: 'object', description: 'the call or its result, as docs/protocol.md says' },
}));
export type JournalEntry = FromSchema<typeof JOURNAL_ENTRY>;

const RECORDED = nullable({ type: 'object', description: 'as in the journal' });
const TIMELINE_ENTRY = named('TimelineEntry', shape({
  position: WHOLE,
  verb: TEXT,
  name: TEXT,
  occurrence: WHOLE,
  label: nullable({ type: 'string', description: "a step's --label, an annotation's text" }),
  call: RECORDED,
  result: RECORDED,
  startedAt: nullable(TIME),
  endedAt: nullable(TIME),
  durationMs: nullable(WHOLE),
  pass: nullable({ type: 'integer', description: 'the pass that recorded it; later ones replayed it' }),
  exitCode: nullable(WHOLE),
  failed: { type: 'boolean' },
  timedOut: { type: 'boolean' },
  runIds: listOf({ type: 'string', description: 'runs it started or waited for' }),
}));
/** One durable call of a run as the run page's timeline shows it (src/server/timeline.ts). */
export type TimelineEntry = FromSchema<typeof TIMELINE_ENTRY>;

const ARTIFACT = named('Artifact', shape({ name: TEXT, size: WHOLE, sha256: TEXT, contentType: TEXT, createdAt: TIME }));
/** A file a run stored with `spool artifact put` (docs/artifacts.md). */
export type Artifact = FromSchema<typeof ARTIFACT>;

const FORM_VALUE = { type: ['string', 'number', 'boolean'] } as const;
const FORM_VALUES = { type: 'object', additionalProperties: FORM_VALUE } as const;
const FORM_FIELD = named('FormField', shape({
  name: TEXT,
  type: { enum: ['string', 'number', 'boolean'] },
  label: TEXT,
  required: { type: 'boolean' },
  default: nullable(FORM_VALUE),
  options: nullable(listOf(TEXT)),
  min: nullable({ type: 'number', description: 'the least value of a number field, included' }),
  max: nullable({ type: 'number', description: 'the greatest value of a number field, included' }),
}));
export type FormField = FromSchema<typeof FORM_FIELD>;
const DECISION = { enum: ['approve', 'reject'] } as const;
export type Decision = FromSchema<typeof DECISION>;

const GATE_ANSWER = named('GateAnswer', shape({
  decision: DECISION,
  by: nullable(TEXT),
  via: { type: 'string', description: 'cli, page, api, slack or mattermost' },
  at: TIME,
  values: nullable({ type: 'object', description: "the form's values" }),
  final: { type: 'boolean', description: 'the answer that decided the gate (the first, or with approvers the count-th approval or first rejection); answers after it were refused with 409 and kept' },
}));
export type GateAnswerView = FromSchema<typeof GATE_ANSWER>;

const APPROVERS = named('Approvers', shape({
  count: { type: 'integer', description: 'how many approvals from distinct people open the gate' },
  from: listOf({ type: 'string', description: 'a user name, or group:<name>' }),
}));

const GATE = named('Gate', shape({
  job: TEXT,
  runId: { type: 'string', description: "the gate's own run, a child of the pipeline run" },
  state: { enum: ['waiting', 'approved', 'rejected', 'timed_out', 'cancelled', 'failed'] },
  prompt: TEXT,
  form: listOf(FORM_FIELD),
  timeoutMs: nullable(WHOLE),
  since: TIME,
  deadline: nullable(TIME),
  answeredBy: nullable(TEXT),
  answeredAt: nullable(TIME),
  values: nullable(FORM_VALUES),
  answers: listOf(GATE_ANSWER),
  approvers: nullable(APPROVERS),
}));
/** An approval gate of a pipeline run, waiting or settled. */
export type Gate = FromSchema<typeof GATE>;

const SHAPE_VERTEX = named('ShapeVertex', shape({
  name: { type: 'string', description: "the job's or node's name" },
  dependsOn: listOf(TEXT),
  state: {
    enum: ['waiting', 'running', 'succeeded', 'failed', 'skipped', 'unknown'],
    description: "unknown: a graph's sleep or wait node with an `if`, or in a cancelled run (it leaves no trace of its own)",
  },
  runId: nullable({ type: 'string', description: "the child run of a job's (or script, call or approval node's) last attempt" }),
  items: nullable(shape({
    total: nullable({ type: 'integer', description: 'null: the items are an expression, not yet known' }),
    started: WHOLE,
    done: { type: 'integer', description: 'items that succeeded' },
    failed: WHOLE,
  })),
}));
/** A job of a pipeline run or a node of a graph run, as the run page's Shape draws it (src/server/run-shape.ts). */
export type ShapeVertex = FromSchema<typeof SHAPE_VERTEX>;
const RUN_SHAPE = named('RunShape', shape({
  kind: nullable({ enum: ['pipeline', 'graph'], description: 'null: a script run, which has no shape' }),
  vertices: listOf(SHAPE_VERTEX),
}));
export type RunShape = FromSchema<typeof RUN_SHAPE>;

const WORKFLOW = named('Workflow', shape({
  name: TEXT,
  interpreter: TEXT,
  runs: WHOLE,
  lastRun: shape({ id: TEXT, status: { enum: RUN_STATUSES }, createdAt: TIME }),
}));
export type Workflow = FromSchema<typeof WORKFLOW>;

const EVENT = named('Event', shape({ seq: WHOLE, id: TEXT, project: TEXT, type: TEXT, subject: nullable(TEXT), payload: ANY, emittedAt: TIME }));
export type Event = FromSchema<typeof EVENT>;

const SCRIPT_SOURCE = { workflow: TEXT, interpreter: TEXT, script: TEXT, cwd: nullable(TEXT) } as const;
const RUNNER = nullable({ type: 'object', description: "on a cluster, the Workflow's image, env and service account" });
/** A handler as `PUT /v1/handlers/:name` stored it. */
const HANDLER_SET = named('HandlerPut', shape({ project: TEXT, name: TEXT, eventType: TEXT, ...SCRIPT_SOURCE }));
const HANDLER = named('Handler', shape({ project: TEXT, name: TEXT, eventType: TEXT, ...SCRIPT_SOURCE, runner: RUNNER }));
export type Handler = FromSchema<typeof HANDLER>;

const CADENCE = { everyMs: nullable(WHOLE), cron: nullable(TEXT) } as const;
/** A schedule as `PUT /v1/schedules/:name` stored it. */
const SCHEDULE_SET = named('SchedulePut', shape({ project: TEXT, name: TEXT, ...CADENCE, ...SCRIPT_SOURCE, nextAt: TIME }));
/** A run in a list of what started it: a schedule's last runs, the run a handler's event started. */
const RUN_SUMMARY = named('RunSummary', shape({ id: TEXT, status: { enum: RUN_STATUSES }, createdAt: TIME }));
export type RunSummary = FromSchema<typeof RUN_SUMMARY>;
const SCHEDULE = named('Schedule', shape({
  project: TEXT,
  name: TEXT,
  ...CADENCE,
  ...SCRIPT_SOURCE,
  nextAt: nullable({ type: 'string', description: 'ISO 8601, UTC; null while suspended' }),
  lastRunId: nullable(TEXT),
  skipped: { type: 'integer', description: 'ticks skipped while the last run went on' },
  runner: RUNNER,
  input: ANY,
  overlap: { enum: ['skip', 'allow'] },
  suspendedAt: nullable({ type: 'string', description: 'ISO 8601, UTC: since when it makes no ticks; null: it ticks' }),
  recentRuns: listOf({ ...RUN_SUMMARY, description: 'the last 5 runs it started (ticks and triggers), newest first' }),
}));
export type Schedule = FromSchema<typeof SCHEDULE>;

const HANDLER_EVENT = named('HandlerEvent', shape({
  seq: WHOLE,
  id: TEXT,
  type: TEXT,
  subject: nullable(TEXT),
  emittedAt: TIME,
  run: nullable({ ...RUN_SUMMARY, description: "the run it started for this handler; null: it came before the handler existed, or the run was deleted" }),
}));

const WAITING_APPROVAL = named('WaitingApproval', shape({
  run: shape({ id: TEXT, workflow: TEXT, subject: nullable(TEXT), submittedBy: nullable(TEXT) }),
  gate: GATE,
  stillNeeded: { type: 'integer', description: 'approvals it needs yet to open' },
}));

const CELL = named('Cell', shape({ key: TEXT, value: TEXT, version: WHOLE }));
export type Cell = FromSchema<typeof CELL>;

/** What a route answers that is not one of the shapes above, by route (as in src/api/requests.ts). */
const RUN_COUNTS = named('RunCounts', shape(Object.fromEntries(RUN_STATUSES.map((status) => [status, WHOLE])) as Record<RunStatus, typeof WHOLE>));

const RUN_STATS_BUCKET = named('RunStatsBucket', shape({ start: TIME, counts: { ...RUN_COUNTS, description: 'runs created in this slice, by the status they have now' } }));
const DURATIONS = named(
  'Durations',
  shape({
    runs: { type: 'integer', description: 'the finished runs measured' },
    p50Ms: WHOLE,
    p90Ms: WHOLE,
    p99Ms: WHOLE,
    maxMs: WHOLE,
  }),
);
export type RunStatsBucket = FromSchema<typeof RUN_STATS_BUCKET>;
/** What a pass's pod runs: its agent asks for it, or a warm pod is handed it with its assignment. */
const PASS_SPEC = named(
  'PassSpec',
  shape({
    run: TEXT,
    pass: WHOLE,
    filename: TEXT,
    interpreter: TEXT,
    script: TEXT,
    input: { type: 'object', description: 'what $SPOOL_INPUT_FILE holds: run, subject, input, payload, event' },
  }),
);

export const RESPONSES = {
  'POST /runs': shape({ run: RUN, created: { type: 'boolean', description: 'false: the run an idempotency key named already' } }),
  'GET /runs': shape(
    { runs: listOf(RUN), next: nullable({ type: 'string', description: "the next page's `before`" }) },
    { counts: { ...RUN_COUNTS, description: 'with counts=true: how many runs the search finds in each status, whatever `status` says' } },
  ),
  'GET /runs/:id': shape({ run: RUN_WITH_SCRIPT }),
  'POST /runs/:id/rerun': shape({ run: RUN }),
  'POST /runs/:id/cancel': shape({ run: RUN, cancelled: { type: 'boolean', description: 'false: it had ended already' } }),
  'GET /runs/:id/logs': shape({ logs: listOf(LOG_LINE), run: RUN }),
  'GET /runs/:id/journal': shape({ journal: listOf(JOURNAL_ENTRY) }),
  'GET /runs/:id/timeline': shape({ run: RUN, timeline: listOf(TIMELINE_ENTRY) }),
  'GET /runs/:id/artifacts': shape({ artifacts: listOf(ARTIFACT) }),
  'GET /runs/:id/artifacts/:name': { description: "the artifact's bytes, with its content type" },
  'GET /runs/:id/approvals': shape({ approvals: listOf(GATE) }),
  'GET /runs/:id/shape': RUN_SHAPE,
  'POST /runs/:id/signals': shape({ queued: { const: true }, run: TEXT, name: TEXT }),
  'POST /runs/:id/approvals/:job': shape({
    run: RUN,
    job: TEXT,
    decision: DECISION,
    values: FORM_VALUES,
    approvals: nullable(named('ApprovalCount', shape({
      counted: { type: 'integer', description: 'approvals so far, this one with them' },
      needed: { type: 'integer', description: 'how many open the gate' },
      by: listOf(nullable(TEXT)),
    }))),
  }),
  'GET /workflows': shape({ workflows: listOf(WORKFLOW) }),
  'GET /workflows/:name/stats': shape({
    workflow: TEXT,
    since: TIME,
    until: TIME,
    bucketMs: { type: 'integer', description: 'how long each slice of the window is' },
    buckets: listOf(RUN_STATS_BUCKET),
    durations: nullable({ ...DURATIONS, description: "created to finished, of the window's finished runs; null when none finished" }),
  }),
  'GET /workflows/:name': shape({
    workflow: WORKFLOW,
    source: named('WorkflowSource', shape({
      workflow: TEXT,
      interpreter: TEXT,
      script: { type: 'string', description: 'the script or document its last run ran' },
      cwd: nullable({ type: 'string', description: 'where its last run was submitted from (spool dev)' }),
      project: TEXT,
    })),
    form: nullable({ ...listOf(FORM_FIELD), description: 'a field per declared input; null: it declares no typed inputs, so its input is JSON' }),
  }),
  'POST /events': shape({ event: EVENT, runs: listOf({ type: 'string', description: 'the runs its handlers started' }) }),
  'GET /handlers': shape({ handlers: listOf(HANDLER) }),
  'GET /handlers/:name/events': shape({
    events: listOf(HANDLER_EVENT),
    next: nullable({ type: 'string', description: "the next page's `before`" }),
  }),
  'PUT /handlers/:name': shape({ handler: HANDLER_SET }),
  'DELETE /handlers/:name': DELETED,
  'GET /schedules': shape({ schedules: listOf(SCHEDULE) }),
  'PUT /schedules/:name': shape({ schedule: SCHEDULE_SET }),
  'DELETE /schedules/:name': DELETED,
  'POST /schedules/:name/trigger': shape({ run: { type: 'string', description: 'the run it started' } }),
  'POST /schedules/:name/suspend': shape({ schedule: SCHEDULE }),
  'POST /schedules/:name/resume': shape({ schedule: SCHEDULE }),
  'GET /approvals/waiting': shape({
    caller: shape({ user: nullable({ type: 'string', description: 'who the server takes the caller for; null: it does not know' }), groups: listOf(TEXT) }),
    approvals: listOf(WAITING_APPROVAL),
  }),
  'GET /state/:entity': shape({ cells: listOf(CELL) }),
  'GET /state/:entity/:key': shape({ cell: CELL }),
  'PUT /state/:entity/:key': shape({ cell: CELL }),
  'DELETE /state/:entity/:key': DELETED,
  'GET /agent/assignment': shape({
    assignment: nullable(shape({ run: TEXT, pass: WHOLE }, { spec: PASS_SPEC })),
  }),
  'GET /agent/runs/:run/passes/:pass': PASS_SPEC,
  'POST /agent/runs/:run/passes/:pass/calls': { type: 'object', description: 'the answer to the call, as docs/protocol.md says' },
  'POST /agent/runs/:run/passes/:pass/logs': OK,
  'POST /agent/runs/:run/passes/:pass/exit': OK,
  'POST /agent/runs/:run/activities/:name/attempts/:attempt': shape({ recorded: { const: true } }),
  /** Not in the route table: the bundle arrives as a tar archive (src/server/checkout-routes.ts). */
  'POST /checkouts': shape({ checkout: TEXT, size: WHOLE, sha256: TEXT }),
} as const;

/** A route's answer, by its method and path as src/api/requests.ts writes them. */
export type ResponseOf<Route extends keyof typeof RESPONSES> = FromSchema<(typeof RESPONSES)[Route]>;

/** Every refusal: `{ "error": { "code", "message" } }` with a 4xx or 5xx status. */
export const ERROR = named('Error', shape({ error: shape({ code: TEXT, message: TEXT }) }));
export type ErrorAnswer = FromSchema<typeof ERROR>;
