import { Ajv, type ErrorObject } from 'ajv';
import { onFirstUse } from '../common/on-first-use.js';
import { MAX_DURATION_MS } from '../common/duration.js';
import { UsageError } from '../common/errors.js';
import { jsonValueProblem } from '../common/json-text.js';
import { oneLine } from '../common/one-line.js';
import { STDERR_TAIL_BYTES } from './protocol.js';

/**
 * Every request a script (or an SDK, or a pod's agent) sends is checked against its verb's schema
 * before anything is recorded: the agent is a boundary, and a field of the wrong type or a name
 * with a newline must be refused with one line naming the field, not recorded or answered with a
 * database's error. A refused request takes no journal position.
 */

/** The one rule for names: steps, locks, signals, event types, cells, entities, activities, outputs. */
export const NAME_RULE = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
} as const;
/**
 * A project: a Kubernetes namespace on a cluster, and part of every run id (`<env>:<project>:run-…`),
 * so stricter than a name: no ':' or '/', nothing a namespace could not be called.
 */
export const PROJECT_RULE = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$',
} as const;

const PROJECT_NAMES = "1 to 63 letters, digits, '.', '_' or '-', starting and ending with a letter or a digit";

/** Refuses a project name a person gave (`--project`), before anything is recorded. */
export function checkProject(name: string, what = '--project'): void {
  if (name.length > PROJECT_RULE.maxLength || !new RegExp(PROJECT_RULE.pattern).test(name)) {
    throw new UsageError(`${what} ${JSON.stringify(name)} is not a project name: ${PROJECT_NAMES}`);
  }
}

/** Milliseconds: whole, not negative, and short of a date JavaScript cannot hold (about 100 years). */
const MS = { type: 'integer', minimum: 0, maximum: MAX_DURATION_MS } as const;
const TEXT = { type: 'string' } as const;
/** Why the client could not read a file (`unreadable`): said to the script as its refusal, so never empty. */
const REASON = { type: 'string', minLength: 1 } as const;
const ANY = {} as const;

type Fields = Record<string, object>;
const verb = (name: string, required: Fields, optional: Fields = {}) => ({
  type: 'object',
  properties: { verb: { const: name }, ...required, ...optional },
  required: ['verb', ...Object.keys(required)],
  additionalProperties: false,
});

const activity = (name: string) =>
  verb(name, {
    name: NAME_RULE,
    argv: { type: 'array', minItems: 1, items: TEXT },
    requires: { type: 'array', items: NAME_RULE },
    attempts: { type: 'integer', minimum: 1, maximum: 100 },
    backoffMs: MS,
    retryOnExit: { anyOf: [{ type: 'null' }, { type: 'array', items: { type: 'integer', minimum: 1, maximum: 255 } }] },
  });

const entity = { entity: NAME_RULE };
/** A failed command's stderr tail: STDERR_TAIL_BYTES of bytes, as text (U+FFFD, three bytes, for what was not UTF-8). */
export const STDERR_TAIL = { type: 'string', maxLength: STDERR_TAIL_BYTES } as const;

export const REQUEST_SCHEMAS: Record<string, object> = {
  step: verb('step', { name: NAME_RULE }, { label: { type: 'string', maxLength: 1024 } }),
  step_fn: verb('step_fn', { name: NAME_RULE }),
  // A command's result, or (with `value`) a step_fn's.
  done: verb(
    'done',
    { position: { type: 'integer', minimum: 0 }, stdout: TEXT, exitCode: { type: 'integer', minimum: 0, maximum: 255 } },
    { stderrTail: STDERR_TAIL },
  ),
  'done:value': verb('done', { position: { type: 'integer', minimum: 0 }, value: ANY }),
  // Output that is not plain text (NUL, not UTF-8): its bytes, as base64.
  'done:bytes': verb(
    'done',
    {
      position: { type: 'integer', minimum: 0 },
      stdoutBase64: { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' },
      exitCode: { type: 'integer', minimum: 0, maximum: 255 },
    },
    { stderrTail: STDERR_TAIL },
  ),
  sleep: verb('sleep', { ms: MS }),
  'wait.signal': verb('wait.signal', { name: NAME_RULE }, { timeoutMs: MS }),
  'wait.event': verb('wait.event', { type: NAME_RULE }, { timeoutMs: MS }),
  lock: verb('lock', { group: NAME_RULE, command: { type: 'boolean' } }),
  'activity.submit': activity('activity.submit'),
  'activity.run': activity('activity.run'),
  'activity.wait': verb('activity.wait', { name: NAME_RULE }),
  'activity.wait:all': verb('activity.wait', { all: { const: true } }),
  'state.get': verb('state.get', { key: NAME_RULE }, entity),
  'state.set': verb('state.set', { key: NAME_RULE, value: TEXT }, entity),
  'state.delete': verb('state.delete', { key: NAME_RULE }, entity),
  'state.version': verb('state.version', { key: NAME_RULE }, entity),
  'state.list': verb('state.list', {}, { prefix: { type: 'string', maxLength: 256 }, ...entity }),
  'state.add': verb('state.add', { key: NAME_RULE }, { value: TEXT, ...entity }),
  'state.incr': verb(
    'state.incr',
    { key: NAME_RULE, by: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } },
    { op: NAME_RULE, ...entity },
  ),
  'state.cas': verb(
    'state.cas',
    { key: NAME_RULE, expected: { type: ['string', 'null'] }, value: TEXT },
    { op: NAME_RULE, ...entity },
  ),
  'event.emit': verb('event.emit', { type: NAME_RULE }, { subject: NAME_RULE, payload: ANY }),
  spawn: verb('spawn', { workflow: NAME_RULE, script: TEXT }, { interpreter: NAME_RULE, input: ANY, body: NAME_RULE, unreadable: REASON }),
  call: verb('call', { workflow: NAME_RULE, script: TEXT }, { interpreter: NAME_RULE, input: ANY, unreadable: REASON }),
  'wait.children': verb('wait.children', { runIds: { type: 'array', items: NAME_RULE } }, { awaiting: TEXT }),
  'call.node': verb('call.node', { type: NAME_RULE, config: { type: 'object' } }, { name: NAME_RULE }),
  'output.set': verb('output.set', { key: NAME_RULE, value: TEXT }),
  annotate: verb('annotate', { text: TEXT }),
  'agent.info': verb('agent.info', {}),
  'artifact.put': verb(
    'artifact.put',
    { name: NAME_RULE },
    { contentType: { ...NAME_RULE, maxLength: 255 }, size: { type: 'integer', minimum: 0 }, unreadable: { ...REASON, maxLength: 4096 } },
  ),
  // A part is at most 1 MiB: base64 takes 4 characters for every 3 bytes.
  'artifact.write': verb('artifact.write', {
    position: { type: 'integer', minimum: 0 },
    data: { type: 'string', maxLength: Math.ceil((1024 * 1024) / 3) * 4, pattern: '^[A-Za-z0-9+/]*={0,2}$' },
  }),
  'artifact.commit': verb('artifact.commit', {
    position: { type: 'integer', minimum: 0 },
    size: { type: 'integer', minimum: 0 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  }),
  'artifact.get': verb('artifact.get', { name: NAME_RULE, part: { type: 'integer', minimum: 0 } }, { run: NAME_RULE }),
  'artifact.list': verb('artifact.list', {}, { run: NAME_RULE, json: { type: 'boolean' } }),
};

// validateSchema off: these schemas are this file's constants, which strict mode still checks as it
// compiles them; checking each against the meta-schema first compiled that too, in every process.
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, validateSchema: false });
// Each compiled when a request first needs it: a pass calls a few verbs of the thirty.
const validators = new Map(Object.entries(REQUEST_SCHEMAS).map(([name, schema]) => [name, onFirstUse(() => ajv.compile(schema))]));

/** The schema a request is checked against: its verb's, or the variant its fields choose. */
function schemaOf(request: Record<string, unknown>): string {
  if (request.verb === 'done' && 'value' in request) return 'done:value';
  if (request.verb === 'done' && 'stdoutBase64' in request) return 'done:bytes';
  if (request.verb === 'activity.wait' && 'all' in request) return 'activity.wait:all';
  return String(request.verb);
}

/**
 * Refuses a request that is not one JSON object, or whose fields are not its verb's, with one line
 * naming the field. An unknown verb is left to the dispatcher, which says which protocol it speaks.
 */
export function checkRequest(request: unknown): void {
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    throw new UsageError('a request is one JSON object with a verb (docs/protocol.md)');
  const fields = request as Record<string, unknown>;
  // Checked first: every message below names the verb, and an object cannot be named.
  if (typeof fields.verb !== 'string') throw new UsageError('a request names its verb as a string (docs/protocol.md)');
  const problem = jsonValueProblem(fields);
  if (problem !== null) throw new UsageError(`bad ${oneLine(String(fields.verb))} request: ${problem}`);
  const validate = validators.get(schemaOf(fields))?.();
  if (!validate) return;
  const valid: boolean = validate(fields);
  // Read from the request, not from `fields`: the validator's type guard narrows a failed one to never.
  const { verb: name } = request as { verb?: unknown };
  if (!valid) throw new UsageError(`bad ${String(name)} request: ${describeError(String(name), validate.errors?.[0])}`);
  const nul = fieldWithNul(request);
  if (nul !== null) throw new UsageError(`bad ${String(name)} request: ${NUL_MESSAGE(nul)}`);
}

export const NUL_MESSAGE = (field: string): string =>
  `${field ? `'${field}'` : 'a key'} contains a NUL character (\\0), which PostgreSQL cannot store; ` +
  `encode binary data (base64) or keep it in a file and record its path`;

/**
 * The first field (dotted path) whose text holds a NUL, or null: PostgreSQL's text and jsonb
 * cannot hold one, so a NUL anywhere in a value would fail deep in the store instead of here.
 */
export function fieldWithNul(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return path;
    const found = fieldWithNul(item, at);
    if (found !== null) return found;
  }
  return null;
}

/**
 * One line naming the field an ajv error is about and what is wrong with it; `where` is what the
 * field belongs to (a verb, a route), for a field that is not one of its own.
 */
export function describeError(where: string | null, error: ErrorObject | undefined): string {
  if (!error) return 'its fields do not match the protocol (docs/protocol.md)';
  const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const named = field ? `'${field}'` : 'the value';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `'${String(params.missingProperty)}' is missing`;
    case 'additionalProperties':
      return `'${String(params.additionalProperty)}' is not a field of ${where ?? 'this'}`;
    case 'type':
      return `${named} must be ${String(params.type).replaceAll(',', ' or ')}`;
    case 'minLength':
      return `${named} must not be empty`;
    case 'maxLength':
      return `${named} is longer than ${String(params.limit)} characters`;
    case 'pattern':
      if (params.pattern === NAME_RULE.pattern)
        return `${named} must not contain control characters (a newline, a tab...)`;
      if (params.pattern === PROJECT_RULE.pattern) return `${named} is not a project name: ${PROJECT_NAMES}`;
      return `${named} ${error.message ?? 'is not valid'}`;
    case 'minimum':
    case 'maximum':
      return `${named} must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}`;
    case 'minItems':
      return `${named} must not be empty`;
    case 'enum':
      return `${named} must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    case 'const':
      return `${named} must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${named} ${error.message ?? 'is not valid'}`;
  }
}
