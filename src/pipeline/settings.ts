/**
 * Settings a document may compute with `${{ }}` (a gate's timeout, a concurrency policy) are read
 * when they are needed, from the run's values. Only then can their value be checked: a value that
 * is not one the setting takes is refused in one line naming the setting, the value and where it
 * came from.
 */
import { parseDuration } from '../common/duration.js';
import { UsageError } from '../common/errors.js';
import { interpolate } from './expressions.js';
import { CONCURRENCY_POLICIES, type Approval, type Concurrency, type ConcurrencyPolicy, type ExpressionScope } from './types.js';

/** How long a gate waits, in ms, for the values it opens with; null waits for ever. */
export function gateTimeoutMs(job: string, approval: Approval, scope: ExpressionScope): number | null {
  if (approval.timeout === null) return null;
  const value = interpolate(approval.timeout, scope).trim();
  const ms = durationMs(value);
  if (ms <= 0) throw new UsageError(`'timeout' of job '${job}' is '${value}' for this run (${approval.timeout}); it must be a duration longer than 0, like 30s, 5m, 2d`);
  return ms;
}

/** A duration in ms, or 0 for text that is not one (empty, negative, misspelt, too long). */
function durationMs(text: string): number {
  try {
    return parseDuration(text);
  } catch {
    return 0;
  }
}

/** The concurrency policy a run is admitted under, read from its input at submit (`file` names the document). */
export function concurrencyPolicy(file: string, concurrency: Concurrency, scope: ExpressionScope): ConcurrencyPolicy {
  const value = interpolate(concurrency.policy, scope).trim();
  const policy = CONCURRENCY_POLICIES.find((known) => known === value);
  if (!policy) throw new UsageError(`${file}: 'concurrency.policy' is '${value}' for this run's input (${concurrency.policy}); it must be one of ${CONCURRENCY_POLICIES.join(', ')}`);
  return policy;
}
