import { ScriptError } from './errors.js';

/**
 * Why a value cannot be recorded as JSON, or null when it can. JSON.stringify would not refuse most
 * of these: it turns a Map or a Set into `{}`, NaN into null and drops a function, so a step's value
 * would silently differ between the first pass and a replay.
 */
function refusal(value: unknown, path: string, seen: Set<object>): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return null;
    case 'number':
      return Number.isFinite(value) ? null : `${String(value)} at ${path}`;
    case 'bigint':
      return `a bigint at ${path}`;
    case 'function':
      return `a function at ${path}`;
    case 'symbol':
      return `a symbol at ${path}`;
  }
  if (value === null) return null;
  const object = value as Record<string, unknown>;
  if (typeof object.toJSON === 'function') return refusal((object.toJSON as () => unknown)(), path, seen);
  if (value instanceof Map) return `a Map at ${path}`;
  if (value instanceof Set) return `a Set at ${path}`;
  if (seen.has(object)) return `a cycle at ${path}`;
  seen.add(object);
  const entries = Array.isArray(value) ? value.map((item, index) => [`${path}[${index}]`, item] as const) : Object.entries(object).map(([key, item]) => [`${path}.${key}`, item] as const);
  for (const [where, item] of entries) {
    const reason = refusal(item, where, seen);
    if (reason) return reason;
  }
  seen.delete(object);
  return null;
}

/**
 * The value as JSON gives it back (a Date becomes its ISO string, undefined fields are dropped,
 * undefined itself is null), or a ScriptError naming `what` for a value JSON cannot hold.
 */
export function asJson(value: unknown, what: string): unknown {
  const reason = refusal(value, '$', new Set());
  if (reason) {
    throw new ScriptError(
      'usage',
      `${what}: the value is not JSON (${reason}); return plain data (objects, arrays, strings, finite numbers, booleans, null)`,
    );
  }
  return JSON.parse(JSON.stringify(value ?? null)) as unknown;
}

/** A state or output value on the wire: a string as it is, anything else as its JSON. */
export function asStoredText(value: unknown, what: string): string {
  return typeof value === 'string' ? value : JSON.stringify(asJson(value, what));
}
