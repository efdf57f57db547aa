import { UsageError } from './errors.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The longest duration anything takes: 100 years, short of a date JavaScript cannot hold. */
export const MAX_DURATION_MS = 36_525 * 86_400_000;

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/** Parses `500ms`, `30s`, `5m`, `2h`, `14d` and combinations such as `1h30m` into milliseconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (trimmed === '') throw new UsageError('empty duration; use a form like 30s, 5m, 2h, 14d or 1h30m');
  if (trimmed.startsWith('-')) throw new UsageError(`a duration cannot be negative: '${text}'`);
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let match = PART.exec(trimmed); match; match = PART.exec(trimmed)) {
    total += Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? 0);
    consumed = PART.lastIndex;
  }
  if (consumed !== trimmed.length) {
    throw new UsageError(`bad duration '${text}'; use a form like 500ms, 30s, 5m, 2h, 14d or 1h30m`);
  }
  if (total > MAX_DURATION_MS) throw new UsageError(`duration '${text}' is too long; the longest is 36525d (100 years)`);
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('');
}
