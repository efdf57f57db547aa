/**
 * What every JSON value crossing a boundary (the socket, the HTTP API) must be, beyond its schema:
 * nested at most MAX_JSON_DEPTH deep (the checks after it recurse, and a value 100,000 deep would
 * end in "Maximum call stack size exceeded"), and text that is well-formed Unicode (a lone
 * surrogate, as `"\ud800"` writes one, has no UTF-8 to be stored as). docs/limits.md.
 */
export const MAX_JSON_DEPTH = 64;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** A UTF-16 surrogate without its other half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether request bytes are UTF-8, as JSON text must be (RFC 8259): nothing is silently replaced. */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The problem with a parsed JSON value no boundary takes, in one line, or null. Walks without recursion. */
export function jsonValueProblem(value: unknown): string | null {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) return 'text that is not well-formed Unicode (a lone surrogate); send UTF-8 text';
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= MAX_JSON_DEPTH) return `JSON nested more than ${MAX_JSON_DEPTH} deep; keep values flatter`;
    for (const [key, child] of Object.entries(item)) {
      if (LONE_SURROGATE.test(key)) return 'a key that is not well-formed Unicode (a lone surrogate); send UTF-8 text';
      stack.push([child, depth + 1]);
    }
  }
  return null;
}
