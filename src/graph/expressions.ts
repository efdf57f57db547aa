import { ExpressionError, GRAPH_NAMES, evaluate, parseExpression, type Expr } from '../pipeline/expressions.js';
import type { DocumentPath } from '../pipeline/problem.js';
import type { ExpressionScope } from '../pipeline/types.js';
import type { ExprValue } from './types.js';

/** `{"$expr": "..."}` and nothing else: a value computed when the node runs. */
export function isExpr(value: unknown): value is ExprValue {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as ExprValue).$expr === 'string'
  );
}

/** Every $expr in a value (a node's config), with where it is. */
export function exprsIn(value: unknown, path: DocumentPath): { path: DocumentPath; text: string }[] {
  if (isExpr(value)) return [{ path: [...path, '$expr'], text: value.$expr }];
  if (Array.isArray(value)) return value.flatMap((item, i) => exprsIn(item, [...path, i]));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => exprsIn(item, [...path, key]));
  return [];
}

/** Parses one graph expression (bare, or one `${{ }}`): the pipeline's language, with a graph's names. */
export function parseGraphExpression(text: string): Expr {
  return parseExpression(text, GRAPH_NAMES);
}

/** A value with each $expr in it replaced by what it yields in `scope`, the rest as written. */
export function resolve(value: unknown, scope: ExpressionScope): unknown {
  if (isExpr(value)) return evaluate(parseGraphExpression(value.$expr), scope);
  if (Array.isArray(value)) return value.map((item) => resolve(item, scope));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, scope)]));
  return value;
}

export { ExpressionError };
