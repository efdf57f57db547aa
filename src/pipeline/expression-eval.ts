import type { ExpressionScope } from './types.js';
import type { Expr, PathRoot } from './expression-parser.js';

/**
 * Evaluates a parsed expression. Missing data is null, never an error: a condition such as
 * `steps.ask_lead.output.timed_out` is read after ask_lead was skipped, and must then be false.
 * `&&` and `||` return one of their operands, as in JavaScript, so `input.env || 'dev'` works.
 */
export function evaluate(expr: Expr, scope: ExpressionScope): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'path':
      return expr.keys.reduce<unknown>((value, key) => member(value, key), root(expr.root, scope));
    case 'not':
      return !truthy(evaluate(expr.operand, scope));
    case 'binary': {
      const left = evaluate(expr.left, scope);
      switch (expr.op) {
        case '&&':
          return truthy(left) ? evaluate(expr.right, scope) : left;
        case '||':
          return truthy(left) ? left : evaluate(expr.right, scope);
        case '==':
          return equal(left, evaluate(expr.right, scope));
        case '!=':
          return !equal(left, evaluate(expr.right, scope));
      }
    }
  }
}

/** JavaScript's truthiness: false, null, '', 0 and NaN are false; everything else, [] and {} too, is true. */
export function truthy(value: unknown): boolean {
  return !(
    value === false ||
    value === null ||
    value === undefined ||
    value === '' ||
    value === 0 ||
    Number.isNaN(value)
  );
}

/** Strict equality for scalars (1 == '1' is false), structural for lists and maps. */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => equal(item, b[i]));
  if (isRecord(a) && isRecord(b) && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equal(a[key], b[key]));
  }
  return false;
}

function root(name: PathRoot, scope: ExpressionScope): unknown {
  switch (name) {
    case 'input':
      return scope.input ?? null;
    case 'steps':
      return scope.steps;
    case 'item':
      return scope.item ?? null;
    case 'nodes':
      return scope.nodes ?? null;
    case 'node':
      return scope.node ?? null;
    case 'index':
      return scope.index ?? null;
  }
}

/** One step down a path; only own properties, so `input.constructor` is null rather than a function. */
function member(value: unknown, key: string | number): unknown {
  if (Array.isArray(value))
    return typeof key === 'number' && Object.hasOwn(value, key) ? ((value[key] as unknown) ?? null) : null;
  if (isRecord(value) && Object.hasOwn(value, key)) return value[key] ?? null;
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
