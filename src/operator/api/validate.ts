import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { oneLine } from '../../common/one-line.js';
import { API_VERSION, KINDS, SCHEMAS, type KindName, type KindObjects, type OpenApiSchema } from './generated.js';

/**
 * What the CLI checks before it sends a manifest, from the same openAPIV3Schemas the API server
 * enforces (crds/*.yaml, through generated.ts), so a mistake is reported as one line naming the field
 * before anything reaches the cluster.
 */
export type ValidationResult =
  | { [K in KindName]: { ok: true; kind: K; value: KindObjects[K] } }[KindName]
  | { ok: false; message: string };

/**
 * The CEL rules (x-kubernetes-validations) in crds/, keyed by their message, each as a small named
 * check: a CEL interpreter for two rules would be far more code than the rules. `'update only'`
 * marks a transition rule (one that reads oldSelf), which only the API server can check, on an
 * update. test/operator/validate.test.ts fails when a CRD gains a rule that is not here.
 */
const exactlyOne = (self: unknown, keys: string[]): boolean => keys.filter((key) => has(self, key)).length === 1;

export const CEL_CHECKS: Record<string, ((self: unknown) => boolean) | 'update only'> = {
  // Run.spec: `self == oldSelf`.
  'spec is immutable: create a new Run': 'update only',
  // Workflow.spec: `has(self.script) != has(self.scriptFrom)`.
  'give a Workflow exactly one of script and scriptFrom': (self) => has(self, 'script') !== has(self, 'scriptFrom'),
  // Schedule.spec: `has(self.every) != has(self.cron)`.
  'exactly one of every and cron must be set': (self) => has(self, 'every') !== has(self, 'cron'),
  // Workflow.spec.env[]: `has(self.value) != has(self.valueFrom)`.
  'give an environment variable either a value or a valueFrom, not both and not neither': (self) => has(self, 'value') !== has(self, 'valueFrom'),
  // Workflow.spec.env[].valueFrom: one of its four sources.
  'valueFrom takes exactly one of secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef': (self) =>
    exactlyOne(self, ['secretKeyRef', 'configMapKeyRef', 'fieldRef', 'resourceFieldRef']),
  // Workflow.spec.envFrom[]: `has(self.secretRef) != has(self.configMapRef)`.
  'envFrom takes exactly one of secretRef, configMapRef': (self) => has(self, 'secretRef') !== has(self, 'configMapRef'),
  // Workflow.spec.template.volumes[]: one source, and not a name of the pass's own volumes.
  'a volume takes exactly one source': (self) =>
    exactlyOne(self, ['configMap', 'secret', 'emptyDir', 'persistentVolumeClaim', 'projected', 'csi', 'ephemeral', 'nfs', 'hostPath']),
  'the volume names spool, client and token belong to the pass\'s pod': (self) =>
    !['spool', 'client', 'token'].includes(String((self as { name?: unknown }).name)),
  // Workflow.spec.template.volumeMounts[].mountPath.
  '/spool belongs to the pass (its sockets, the client and the script)': (self) => self !== '/spool' && !String(self).startsWith('/spool/'),
};


const KIND_NAMES = Object.keys(KINDS) as KindName[];

// A DNS-1123 subdomain, what the API server asks of a custom resource's name.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

// RFC 3339, as Kubernetes reads format: date-time.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
ajv.addFormat('date-time', { type: 'string', validate: (text) => DATE_TIME.test(text) && !Number.isNaN(Date.parse(text)) });
ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isSafeInteger(n) });

const validators = new Map<KindName, ValidateFunction>(
  KIND_NAMES.map((kind) => [kind, ajv.compile(toJsonSchema(SCHEMAS[kind], true))]),
);

/** Checks a parsed manifest (one object) against its kind's schema and the CRDs' CEL rules. */
export function validateManifest(obj: unknown): ValidationResult {
  const result = checkManifest(obj);
  // A value or key the refusal quotes may hold a line break: it stays one line.
  return result.ok ? result : { ok: false, message: oneLine(result.message) };
}

function checkManifest(obj: unknown): ValidationResult {
  if (!isObject(obj)) return fail('manifest', `must be an object, not ${typeName(obj)}`);
  if (obj.apiVersion !== API_VERSION) {
    return fail('apiVersion', obj.apiVersion === undefined ? 'required' : `must be ${API_VERSION}, not ${show(obj.apiVersion)}`);
  }
  const kind = KIND_NAMES.find((name) => name === obj.kind);
  if (!kind) {
    const known = KIND_NAMES.join(', ');
    return fail('kind', obj.kind === undefined ? `required (one of ${known})` : `unknown kind ${show(obj.kind)}; use one of ${known}`);
  }
  const metadata = checkMetadata(obj.metadata);
  if (metadata) return { ok: false, message: metadata };
  const value = withoutNulls(SCHEMAS[kind], obj);
  const validate = validators.get(kind);
  if (validate && !validate(value)) return { ok: false, message: describe(validate.errors ?? []) };
  const rule = checkRules(SCHEMAS[kind], value, '');
  if (rule) return { ok: false, message: rule };
  return { ok: true, kind, value } as ValidationResult;
}

/** The CEL rules of the CRDs that have no entry in CEL_CHECKS (none, unless a CRD gained one). */
export function uncheckedRules(): string[] {
  const missing: string[] = [];
  const visit = (schema: OpenApiSchema, path: string): void => {
    for (const { message, rule } of schema['x-kubernetes-validations'] ?? []) {
      if (!(message !== undefined && message in CEL_CHECKS)) missing.push(`${path}: ${rule}`);
    }
    for (const [field, child] of Object.entries(schema.properties ?? {})) visit(child, join(path, field));
    if (schema.items) visit(schema.items, `${path}[]`);
  };
  for (const kind of KIND_NAMES) visit(SCHEMAS[kind], kind);
  return missing;
}

/**
 * The JSON Schema ajv checks: the CRD's schema with the x-kubernetes-* keys translated away.
 * Objects with properties refuse unknown fields (the API server would prune them silently, kubectl
 * --validate=strict refuses them; refusing catches a misspelt field); x-kubernetes-preserve-unknown-fields
 * allows anything; a list-type set has unique items. List-map keys and CEL rules are checked after
 * ajv, by checkRules. Root metadata is checked by checkMetadata.
 */
function toJsonSchema(schema: OpenApiSchema, root = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case 'properties':
        out.properties = Object.fromEntries(
          Object.entries(schema.properties ?? {}).map(([field, child]) => [
            field,
            root && field === 'metadata' ? { type: 'object' } : toJsonSchema(child),
          ]),
        );
        break;
      case 'items':
        out.items = toJsonSchema(schema.items ?? {});
        break;
      case 'additionalProperties':
        out.additionalProperties = typeof value === 'boolean' ? value : toJsonSchema(value as OpenApiSchema);
        break;
      case 'nullable':
        break;
      case 'x-kubernetes-list-type':
        if (value === 'set') out.uniqueItems = true;
        break;
      case 'x-kubernetes-int-or-string':
        if (value === true) out.type = ['integer', 'string'];
        break;
      case 'x-kubernetes-preserve-unknown-fields':
      case 'x-kubernetes-list-map-keys':
      case 'x-kubernetes-validations':
      case 'x-kubernetes-embedded-resource':
      case 'x-kubernetes-map-type':
        break;
      default:
        if (key.startsWith('x-kubernetes-')) throw new Error(`validate.ts does not know ${key}; teach toJsonSchema it`);
        out[key] = value;
    }
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  if (schema.type === 'object' && schema.properties && !schema['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  return out;
}

/**
 * A copy of `value` without the null fields the API server would prune: it drops a null where the
 * schema has no `nullable: true`, rather than refusing it (so `subject:` left empty in YAML means
 * absent), except under x-kubernetes-preserve-unknown-fields, which keeps what it is given.
 */
function withoutNulls(schema: OpenApiSchema, value: unknown): unknown {
  if (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties) return value;
  if (Array.isArray(value)) return schema.items ? value.map((item) => withoutNulls(schema.items ?? {}, item)) : value;
  if (!isObject(value) || !schema.properties) return value;
  const out: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value)) {
    const child = schema.properties[field];
    if (item === null && child && child.nullable !== true) continue;
    out[field] = child ? withoutNulls(child, item) : item;
  }
  return out;
}

/** A custom resource's metadata needs a name (or generateName) that is a DNS-1123 subdomain. */
function checkMetadata(metadata: unknown): string | null {
  if (metadata === undefined) return 'metadata.name: required';
  if (!isObject(metadata)) return `metadata: must be an object, not ${typeName(metadata)}`;
  const { name, generateName, namespace } = metadata;
  if (name === undefined && generateName === undefined) return 'metadata.name: required';
  for (const [field, value] of [
    ['name', name],
    ['namespace', namespace],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'string') return `metadata.${field}: must be a string, not ${typeName(value)}`;
    if (value.length > 253 || !DNS_SUBDOMAIN.test(value)) {
      return `metadata.${field}: ${show(value)} must be lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (at most 253)`;
    }
  }
  if (generateName !== undefined && typeof generateName !== 'string') {
    return `metadata.generateName: must be a string, not ${typeName(generateName)}`;
  }
  return null;
}

/** The CEL rules and list-map keys along `value`; the first one broken, as a message, or null. */
function checkRules(schema: OpenApiSchema, value: unknown, path: string): string | null {
  for (const { message, rule } of schema['x-kubernetes-validations'] ?? []) {
    const check = message === undefined ? undefined : CEL_CHECKS[message];
    if (typeof check === 'function' && !check(value)) return `${path || 'manifest'}: ${message ?? rule}`;
  }
  if (Array.isArray(value)) {
    const keys = schema['x-kubernetes-list-type'] === 'map' ? schema['x-kubernetes-list-map-keys'] ?? [] : [];
    const seen = new Set<string>();
    for (const [index, item] of value.entries()) {
      if (keys.length > 0 && isObject(item)) {
        const key = JSON.stringify(keys.map((name) => item[name]));
        if (seen.has(key)) {
          return `${path}[${index}]: duplicate ${keys.map((name) => `${name} ${show(item[name])}`).join(', ')}`;
        }
        seen.add(key);
      }
      if (schema.items) {
        const problem = checkRules(schema.items, item, `${path}[${index}]`);
        if (problem) return problem;
      }
    }
  } else if (isObject(value) && schema.properties) {
    for (const [field, child] of Object.entries(schema.properties)) {
      if (value[field] === undefined) continue;
      const problem = checkRules(child, value[field], join(path, field));
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * One line for ajv's errors: the first, except that an unknown field is named before a required
 * field missing from the same object, since it is usually that field misspelt.
 */
function describe(errors: ErrorObject[]): string {
  const unknown = errors.find((error) => error.keyword === 'additionalProperties');
  const first = errors.find((error) => error.keyword === 'required' && unknown?.instancePath === error.instancePath) ? unknown : errors[0];
  if (!first) return 'manifest: does not match its schema';
  const path = pathOf(first.instancePath);
  const params = first.params as Record<string, unknown>;
  switch (first.keyword) {
    case 'required':
      return `${join(path, String(params.missingProperty))}: required`;
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const allowed = Object.keys((first.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const meant = allowed.find((name) => name.toLowerCase() === field.toLowerCase());
      return `${join(path, field)}: unknown field${meant ? ` (did you mean ${meant}?)` : `; known fields: ${allowed.join(', ')}`}`;
    }
    case 'type':
      return `${path}: must be ${article(String(params.type))}, not ${typeName(first.data)}`;
    case 'enum':
      return `${path}: must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}, not ${show(first.data)}`;
    case 'pattern':
      return `${path}: must match ${String(params.pattern)}, not ${show(first.data)}`;
    case 'minLength':
      return params.limit === 1 ? `${path}: must not be empty` : `${path}: must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `${path}: must be at most ${String(params.limit)} characters`;
    case 'format':
      return `${path}: must be ${params.format === 'date-time' ? 'an RFC 3339 date-time' : `a ${String(params.format)}`}, not ${show(first.data)}`;
    case 'uniqueItems':
      return `${path}: items ${String(params.j)} and ${String(params.i)} are the same`;
    default:
      return `${path || 'manifest'}: ${first.message ?? 'is not valid'}`;
  }
}

function fail(path: string, message: string): ValidationResult {
  return { ok: false, message: `${path}: ${message}` };
}

/** `/spec/env/0/name` -> `spec.env[0].name` */
function pathOf(pointer: string): string {
  let path = '';
  for (const part of pointer.split('/').slice(1)) {
    const field = part.replaceAll('~1', '/').replaceAll('~0', '~');
    path = /^\d+$/.test(field) ? `${path}[${field}]` : join(path, field);
  }
  return path;
}

function join(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

function has(value: unknown, field: string): boolean {
  return isObject(value) && value[field] !== undefined && value[field] !== null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `a string (${show(value)})`;
  if (typeof value === 'number') return `a number (${value})`;
  return `a ${typeof value} (${String(value)})`;
}

function article(type: string): string {
  const names: Record<string, string> = { object: 'an object', array: 'a list', integer: 'an integer', string: 'a string' };
  return type
    .split(',')
    .map((name) => names[name] ?? `a ${name}`)
    .join(' or ');
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
