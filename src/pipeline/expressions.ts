/**
 * `${{ }}` expressions: what pipelines use for conditions (`if:`), computed lists (`fan_out.items`)
 * and text (`run:`, `prompt:`, `concurrency.group`, `throttle.key`). The language is small on
 * purpose: paths, literals, `!`, `&&`, `||`, `==`, `!=` and parentheses. docs/pipelines.md has it.
 */
import { evaluate, truthy } from './expression-eval.js';
import { parseExpression, parseExpressionAt, type Expr } from './expression-parser.js';
import { scanTemplate } from './template-scan.js';
import type { ExpressionScope } from './types.js';

export { ExpressionError } from './expression-error.js';
export { evaluate, equal, truthy } from './expression-eval.js';
export { GRAPH_NAMES, parseExpression, parseExpressionAt, type Expr } from './expression-parser.js';
export { isExpression, scanTemplate, type TemplatePart } from './template-scan.js';

export interface References {
  /** Jobs read through steps.<job>, in order of first use. */
  jobs: string[];
  usesInput: boolean;
  usesItem: boolean;
}

/** What an expression reads, for checking it against the graph without running it. */
export function references(expr: Expr): References {
  const result: References = { jobs: [], usesInput: false, usesItem: false };
  for (const path of paths(expr)) {
    if (path.root === 'input') result.usesInput = true;
    else if (path.root === 'item') result.usesItem = true;
    else if (path.root === 'steps' && typeof path.keys[0] === 'string' && !result.jobs.includes(path.keys[0])) result.jobs.push(path.keys[0]);
  }
  return result;
}

/** Every path in an expression, left to right, with its offset (for pointing at the one at fault). */
export function paths(expr: Expr): Extract<Expr, { kind: 'path' }>[] {
  switch (expr.kind) {
    case 'literal':
      return [];
    case 'path':
      return [expr];
    case 'not':
      return paths(expr.operand);
    case 'binary':
      return [...paths(expr.left), ...paths(expr.right)];
  }
}

/**
 * Replaces each `${{ }}` in a string with its value: strings as they are, null (and missing data)
 * as '', lists and maps as JSON. The result is text, not shell-quoted: a `run:` that embeds input
 * trusts whoever supplies that input.
 */
export function interpolate(template: string, scope: ExpressionScope): string {
  return scanTemplate(template)
    .map((part) =>
      part.kind === 'text'
        ? part.text
        : stringify(evaluate(parseExpressionAt(template, part.sourceAt, part.sourceAt + part.source.length), scope)),
    )
    .join('');
}

/** An `if:` string (one `${{ }}`, or the bare expression) decided against a scope. */
export function evaluateCondition(condition: string, scope: ExpressionScope): boolean {
  return truthy(evaluate(parseExpression(condition), scope));
}

export function stringify(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
