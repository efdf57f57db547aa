import type { FormField } from '../pipeline/types.js';

/**
 * What is wrong with a run's input for a graph's typed inputs (those that declare a `type`,
 * docs/graphs.md), in one line naming the input, or null when it fits. Strict, as JSON is: a
 * number input takes a number, not the text "5" (the Start form sends numbers as numbers); an
 * input left out takes its default, unless it is required. Keys the graph does not declare, and
 * inputs typed only by their default, are left as they are.
 */
export function graphInputProblem(typed: FormField[], input: unknown): string | null {
  if (typed.length === 0) return null;
  if (input !== null && (typeof input !== 'object' || Array.isArray(input)))
    return `the graph declares typed inputs (${typed.map((field) => field.name).join(', ')}), so its input must be a JSON object, not ${JSON.stringify(input)}`;
  const given = (input ?? {}) as Record<string, unknown>;
  for (const field of typed) {
    const problem = field.name in given ? valueProblem(field, given[field.name]) : field.required ? `is required (a ${field.type})` : null;
    if (problem) return `input '${field.name}' ${problem}`;
  }
  return null;
}

function valueProblem(field: FormField, value: unknown): string | null {
  if (typeof value !== field.type) return `must be a ${field.type}, not ${JSON.stringify(value)}`;
  if (field.options && !field.options.includes(value as string)) return `must be one of ${field.options.join(', ')}, not ${JSON.stringify(value)}`;
  if (field.min !== null && (value as number) < field.min) return `must be at least ${field.min}, not ${String(value)}`;
  if (field.max !== null && (value as number) > field.max) return `must be at most ${field.max}, not ${String(value)}`;
  return null;
}
