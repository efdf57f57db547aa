import type { ErrorObject } from 'ajv';
import { pathFromPointer, subject, valueAt, where } from './document-path.js';
import { PipelineProblem } from './problem.js';
import schema from './schema.json' with { type: 'json' };

/**
 * Turns ajv's errors into one PipelineProblem that says what was expected, in the document's words.
 * Messages for durations, expressions and the like are keyed by the schema definition that failed
 * (found by identity: verbose errors carry the schema object), so they hold wherever it is used.
 */
export function problemFor(errors: readonly ErrorObject[], data: unknown, document: DocumentKind = PIPELINE_DOCUMENT): PipelineProblem {
  const error = pick(errors);
  if (!error) return new PipelineProblem(`the document does not match the ${document.name} schema`, []);
  const path = pathFromPointer(error.instancePath, data);
  const params = error.params as Record<string, unknown>;
  const parent = (error.parentSchema ?? {}) as SchemaNode;
  const definition = document.definitions.get(parent);
  const what = subject(path);
  const value = valueAt(data, path);

  if (path.length === 0 && error.keyword === 'type')
    return new PipelineProblem(`expected a ${document.name}: ${document.shape}`, path);
  // minItems is used only by steps lists, minProperties only by jobs, maxItems only by fan_out items.
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const allowed = Object.keys(parent.properties ?? {});
      return new PipelineProblem(
        `unknown key '${key}' ${where(path)} (expected one of ${allowed.join(', ')})`,
        [...path, key],
        'key',
      );
    }
    case 'required':
      return new PipelineProblem(`missing key '${String(params.missingProperty)}' ${where(path)}`, path, 'owner');
    case 'oneOf': {
      // Each branch requires one key: a job's bodies (steps, script, approval, fan_out), a fan_out's (steps, workflow).
      const bodies = (parent.oneOf ?? []).flatMap((branch) => branch.required ?? []);
      const present = Object.keys(value ?? {}).filter((key) => bodies.includes(key));
      const choice = `${bodies.slice(0, -1).join(', ')} or ${String(bodies.at(-1))}`;
      if (present.length === 0) return new PipelineProblem(`${what} needs one of ${choice}`, path, 'owner');
      // In document order, pointing at the second: the one to remove, or to move to a job of its own.
      return new PipelineProblem(
        `${what} has both ${present[0]} and ${present[1]}; it takes exactly one of ${choice}`,
        [...path, present[1] ?? ''],
        'key',
      );
    }
    case 'propertyNames': {
      const name = String(params.propertyName);
      const fixed = name.replace(/[^A-Za-z0-9_]/g, '_').replace(/^(?=[0-9])/, '_');
      const kind = path[0] === 'outputs' ? 'output' : 'job';
      return new PipelineProblem(
        `${kind} name '${name}' must be letters, digits and underscores, not starting with a digit, since expressions name ${kind}s and read '-' as minus (try '${fixed}')`,
        [...path, name],
        'key',
      );
    }
    case 'maxItems':
      return new PipelineProblem(
        `fan_out takes at most ${Number(params.limit)} items, got ${Array.isArray(value) ? value.length : '?'}`,
        [...path, Number(params.limit)],
      );
    case 'uniqueItems': {
      const later = Math.max(Number(params.i), Number(params.j));
      return new PipelineProblem(`${what} lists '${String(valueAt(value, [later]))}' twice`, [...path, later]);
    }
    case 'enum':
      return new PipelineProblem(
        `${what} must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`,
        path,
      );
    case 'minLength':
      return new PipelineProblem(`${what} must not be empty`, path);
    case 'minItems':
      // Not only steps are lists: answerers, approvers' from.
      return new PipelineProblem(`${what} must list at least one ${path.at(-1) === 'steps' ? 'step' : 'entry'}`, path);
    case 'minProperties':
      return new PipelineProblem(`${what} must hold at least one job`, path);
    case 'minimum':
      return new PipelineProblem(`${what} must be ${Number(params.limit)} or more`, path);
    case 'maximum':
      return new PipelineProblem(`${what} must be ${Number(params.limit)} or less`, path);
  }
  const expected = definition ? EXPECTED[definition] : undefined;
  if (expected) return new PipelineProblem(`${what} must be ${expected}`, path);
  if (error.keyword === 'type') return new PipelineProblem(`${what} must be ${typeNames(params.type)}`, path);
  return new PipelineProblem(`${what} ${error.message ?? 'is not valid'}`, path);
}

/** Which schema the errors are from: its name and shape for messages, its definitions by identity. */
export interface DocumentKind {
  name: string;
  shape: string;
  definitions: Map<unknown, string>;
}

/** A schema's definitions by identity, as verbose errors carry them. */
export const definitionsOf = (document: { definitions: Record<string, unknown> }): Map<unknown, string> =>
  new Map(Object.entries(document.definitions).map(([name, node]) => [node, name]));

const PIPELINE_DOCUMENT: DocumentKind = { name: 'pipeline', shape: 'a map with name and jobs', definitions: definitionsOf(schema) };

interface SchemaNode {
  properties?: Record<string, unknown>;
  oneOf?: { required?: string[] }[];
}

/** What each definition holds, for a value that is not one (wrong type or shape). */
const EXPECTED: Record<string, string> = {
  duration: 'a duration like 30s, 5m, 2d',
  durationOrExpression: 'a duration like 30s, 5m, 2d, or ${{ }} that yields one',
  concurrencyPolicy: 'queue, cancel-running or skip, or ${{ }} over input that yields one',
  expression: 'one ${{ }} expression, like ${{ steps.ask.output.timed_out }}',
  positiveInt: 'a whole number, 1 or more',
  retryObject: 'a number of retries, or {attempts, backoff}',
  rateString: 'a rate like 10/1m, or {limit, period}',
  rateObject: 'a rate like 10/1m, or {limit, period}',
  text: 'a string, or {"$expr": "..."}',
  nodeId: 'letters, digits and underscores, not starting with a digit, since expressions name nodes (nodes.<id>) and read \'-\' as minus',
  expr: 'one {"$expr": "..."}, such as {"$expr": "nodes.charge.output.status"}',
  durationOrExpr: 'a duration like 30s, 5m, 2d, or {"$expr": "..."} that yields one',
};


const TYPE_NAMES: Record<string, string> = {
  object: 'a map',
  array: 'a list',
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
};

function typeNames(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((name) => TYPE_NAMES[String(name)] ?? String(name)).join(' or ');
}

/**
 * The error to report, from ajv's full list (allErrors): the first that is not a summary's detail,
 * unless an unknown key sits in the same map, since a misspelt key is also a missing one.
 * Skipped: a oneOf branch's errors (the oneOf error after them says it better), the pattern error
 * inside propertyNames (likewise), and an "if" error (its then/else branch's error precedes it).
 */
function pick(errors: readonly ErrorObject[]): ErrorObject | undefined {
  const real = errors.filter(
    (error) => error.keyword !== 'if' && !error.schemaPath.includes('/oneOf/') && error.propertyName === undefined,
  );
  const first = real[0];
  if (!first) return errors[0];
  return (
    real.find((error) => error.keyword === 'additionalProperties' && error.instancePath === first.instancePath) ?? first
  );
}
