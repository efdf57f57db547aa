import { MAX_JSON_DEPTH } from '../common/json-text.js';
import { MAX_EXPRESSION_DEPTH } from '../pipeline/expression-parser.js';
import { MAX_DURATION_MS } from '../common/duration.js';
import {
  DEFAULT_MAX_ARTIFACT_BYTES,
  DEFAULT_MAX_CHECKOUT_BYTES,
  DEFAULT_MAX_RUN_ARTIFACT_BYTES,
  DEFAULT_MAX_VALUE_BYTES,
} from '../engine/limits.js';
import { ARTIFACT_PART_BYTES } from '../engine/protocol.js';
import { NAME_RULE, PROJECT_RULE, REQUEST_SCHEMAS } from '../engine/request-schema.js';
import { MAX_FAN_OUT_ITEMS } from '../pipeline/defaults.js';
import { API_ROUTES, type ApiRoute } from '../api/requests.js';
import { ERROR, RESPONSES } from '../api/responses.js';
import { BODY_LIMIT } from './http-error.js';

/**
 * The reference sections of docs/api.md, docs/protocol.md and docs/limits.md, written from the
 * schemas the server and the agent check requests with, so the documentation cannot drift from
 * what is enforced. `npm run gen:docs` writes them; test/server/reference-docs.test.ts fails when
 * a document is out of date.
 */

type Schema = Record<string, unknown>;

/** A field's schema in a few words: `name`, `integer 1–100`, `"approve" or "reject"`. */
export function describeSchema(schema: Schema): string {
  if (schema === NAME_RULE || (schema.pattern === NAME_RULE.pattern && schema.maxLength === NAME_RULE.maxLength))
    return 'name';
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(describeSchema).join(' or ');
  if (Array.isArray(schema.enum))
    return (schema.enum as unknown[]).map((value) => `\`${JSON.stringify(value)}\``).join(', ');
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``;
  if (typeof schema.description === 'string') return schema.description;
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : String(schema.type ?? 'any JSON');
  const bounds = [
    typeof schema.minimum === 'number' && typeof schema.maximum === 'number'
      ? `${schema.minimum}–${schema.maximum}`
      : '',
    typeof schema.minimum === 'number' && typeof schema.maximum !== 'number' ? `≥ ${schema.minimum}` : '',
    typeof schema.maxLength === 'number' ? `≤ ${schema.maxLength} chars` : '',
  ].filter(Boolean);
  if (type === 'array') return `array of ${describeSchema((schema.items as Schema | undefined) ?? {})}`;
  if (type === 'object' && schema.properties) return `{${Object.keys(schema.properties).join(', ')}}`;
  if (type === 'object' && schema.additionalProperties)
    return `{name: ${describeSchema(schema.additionalProperties as Schema)}}`;
  return [type, ...bounds].join(' ');
}

const fieldList = (fields: Record<string, object> | undefined, optional: boolean): string[] =>
  Object.entries(fields ?? {}).map(
    ([name, schema]) => `\`${name}${optional ? '?' : ''}\`: ${describeSchema(schema as Schema)}`,
  );

const cell = (items: string[]): string => (items.length ? items.join('; ') : '');

/** docs/api.md: every route, the fields its body and query take. */
export function apiReference(routes: readonly ApiRoute[] = API_ROUTES): string {
  const rows = routes.map((route) => {
    const body = [...fieldList(route.body?.required, false), ...fieldList(route.body?.optional, true)];
    const query = fieldList(route.query?.optional, true);
    return `| \`${route.method} /v1${route.path}\` | ${cell(body)} | ${cell(query)} |`;
  });
  return ['| route | body | query |', '|---|---|---|', ...rows].join('\n');
}

/** A field of an answer: a named shape by its name, else its type with what it holds in brackets. */
function describeAnswer(schema: Schema): string {
  if (typeof schema.title === 'string') return `\`${schema.title}\``;
  const { description, ...rest } = schema;
  const type = answerType(rest);
  const note = typeof description === 'string' ? description : '';
  return type && note ? `${type} (${note})` : type || note;
}

/** An answer field's type, without its description; '' for any JSON. */
function answerType(schema: Schema): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(describeAnswer).join(' or ');
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((value) => `\`${JSON.stringify(value)}\``).join(' or ');
  if (schema.type === 'array') return `array of ${describeAnswer(schema.items as Schema)}`;
  if (schema.properties) return `{${answerFields(schema).join(', ')}}`;
  if (typeof schema.additionalProperties === 'object') return `{name: ${describeAnswer(schema.additionalProperties as Schema)}}`;
  return Object.keys(schema).length ? describeSchema(schema) : '';
}

const answerFields = (schema: Schema): string[] => {
  const required = (schema.required as string[] | undefined) ?? [];
  return Object.entries(schema.properties as Record<string, Schema>).map(
    ([name, field]) => `\`${name}${required.includes(name) ? '' : '?'}\`: ${describeAnswer(field)}`,
  );
};

/** The named shapes an answer holds, each once, in the order they first appear. */
function namedShapes(schema: unknown, found = new Map<string, Schema>()): Map<string, Schema> {
  if (!schema || typeof schema !== 'object') return found;
  const { title } = schema as Schema;
  if (typeof title === 'string') {
    if (found.has(title)) return found;
    found.set(title, schema as Schema);
  }
  for (const value of Object.values(schema)) namedShapes(value, found);
  return found;
}

/** docs/api.md: what each route answers (src/api/responses.ts), and the fields of each shape it names. */
export function answersReference(): string {
  const answer = (schema: Schema): string =>
    typeof schema.title === 'string' || !schema.properties ? describeAnswer(schema) : cell(answerFields(schema));
  const routes = Object.entries(RESPONSES).map(([route, schema]) => {
    const [method, path] = route.split(' ');
    return `| \`${method} /v1${path}\` | ${answer(schema)} |`;
  });
  const shapes = [...namedShapes([RESPONSES, ERROR]).entries()].map(
    ([title, schema]) => `| \`${title}\` | ${cell(answerFields(schema))} |`,
  );
  return [
    '| route | answer (2xx) |',
    '|---|---|',
    ...routes,
    '',
    '| shape | fields |',
    '|---|---|',
    ...shapes,
  ].join('\n');
}

/** docs/protocol.md: every request, its fields and their types. */
export function protocolReference(): string {
  const rows = Object.entries(REQUEST_SCHEMAS).map(([name, raw]) => {
    const schema = raw as { properties: Record<string, object>; required: string[] };
    const fields = Object.entries(schema.properties)
      .filter(([field]) => field !== 'verb')
      .map(
        ([field, type]) =>
          `\`${field}${schema.required.includes(field) ? '' : '?'}\`: ${describeSchema(type as Schema)}`,
      );
    return `| \`${name.replace(/:.*/, '')}\` | ${cell(fields)} |`;
  });
  return ['| `verb` | fields |', '|---|---|', ...rows].join('\n');
}

const mib = (bytes: number): string => `${bytes / (1024 * 1024)} MiB (${bytes} bytes)`;

/** docs/limits.md: every limit, from the constants the code checks against. */
export function limitsReference(): string {
  const rows: [string, string, string][] = [
    [
      'a name (step, lock, signal, event type, state key, entity, activity, output, handler, schedule; path parameters)',
      `${NAME_RULE.minLength}–${NAME_RULE.maxLength} characters, no control characters (no newline, tab or NUL)`,
      'fixed',
    ],
    [
      'a recorded value (a step, activity or locked command output, a step_fn value, a graph http node\'s response, a state value, an output, an annotation, an event or signal payload, a run input, a spawned script)',
      mib(DEFAULT_MAX_VALUE_BYTES),
      '`SPOOL_MAX_RESULT_BYTES`, `spool run --max-result-bytes`',
    ],
    [
      'an artifact (`spool artifact put`; docs/artifacts.md)',
      mib(DEFAULT_MAX_ARTIFACT_BYTES),
      '`SPOOL_MAX_ARTIFACT_BYTES` (on `spool run`, `spool dev` or the operator)',
    ],
    [
      "all of one run's artifacts together",
      mib(DEFAULT_MAX_RUN_ARTIFACT_BYTES),
      '`SPOOL_MAX_RUN_ARTIFACT_BYTES`',
    ],
    [
      "a checkout bundle (`spool run --with DIR`: the files under DIR that .gitignore does not leave out)",
      mib(DEFAULT_MAX_CHECKOUT_BYTES),
      '`SPOOL_MAX_CHECKOUT_BYTES`',
    ],
    [
      'an artifact part on the spool socket (`artifact.write`, `artifact.get`)',
      `1 MiB; clients send ${ARTIFACT_PART_BYTES / 1024} KiB`,
      'fixed',
    ],
    [
      'a project (a namespace on a cluster; part of every run id)',
      `1–${PROJECT_RULE.maxLength} letters, digits, \`.\`, \`_\` or \`-\`, starting and ending with a letter or a digit`,
      'fixed',
    ],
    ['an HTTP request body', BODY_LIMIT.replace('mb', ' MB'), 'fixed'],
    [
      'a duration (sleep, timeouts, backoff, schedule periods)',
      `0 to ${MAX_DURATION_MS / 86_400_000}d (100 years; ${MAX_DURATION_MS} ms)`,
      'fixed',
    ],
    ['a step label', '1024 characters', 'fixed'],
    ['activity attempts; exit codes in `--retry-on-exit`', '1–100; 1–255', 'fixed'],
    ['`fan_out` items of one pipeline job or graph node', String(MAX_FAN_OUT_ITEMS), 'fixed'],
    ['runs per page (`GET /v1/runs?limit=`)', '1–1000 (default 100)', 'fixed'],
    [
      'text anywhere in a request or a script',
      'UTF-8 without NUL characters (PostgreSQL cannot store one); a script file that is not UTF-8 is refused naming the line',
      'fixed',
    ],
    [
      "how a request's text is encoded",
      'an HTTP body must be UTF-8 (`400 bad_encoding`, rather than stored with U+FFFD); a lone surrogate in any string or key is refused, on the socket and over HTTP',
      'fixed',
    ],
    ['how deep JSON nests (a payload, an input, a value; on the socket and over HTTP)', `${MAX_JSON_DEPTH} levels`, 'fixed'],
    ['how deep a `${{ }}` expression nests (`(` and `!`)', `${MAX_EXPRESSION_DEPTH} levels, refused with file:line:col`, 'fixed'],
    [
      "a script's output (its own stdout, a step's)",
      'any bytes: a NUL or bytes that are not UTF-8 are kept, and a replay gives them back as they were (docs/protocol.md)',
      '—',
    ],
  ];
  return ['| what | limit | set by |', '|---|---|---|', ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

/** The marked section `name` of a document, replaced by `body`. */
export function withSection(document: string, name: string, body: string): string {
  const begin = `<!-- generated: ${name} (npm run gen:docs) -->`;
  const end = `<!-- end: ${name} -->`;
  const from = document.indexOf(begin);
  const to = document.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no section '${name}' (${begin} ... ${end}) in the document`);
  return `${document.slice(0, from + begin.length)}\n${body}\n${document.slice(to)}`;
}

/** Each generated document section: the file, the section name, and its content. */
export const REFERENCE_SECTIONS: [file: string, name: string, render: () => string][] = [
  ['docs/api.md', 'api-fields', () => apiReference()],
  ['docs/api.md', 'api-answers', answersReference],
  ['docs/protocol.md', 'protocol-fields', protocolReference],
  ['docs/limits.md', 'limits', limitsReference],
];
