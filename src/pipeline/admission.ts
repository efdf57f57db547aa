import type { ConcurrencyRule, Throttle } from '../engine/admission.js';
import { interpolate } from './expressions.js';
import { parsePipeline } from './parse.js';
import { concurrencyPolicy } from './settings.js';

/** What a pipeline asks of admission, with its `${{ input.* }}` parts filled in from the run's input. */
export function admissionRules(text: string, file: string, input: unknown): { concurrency: ConcurrencyRule | null; throttle: Throttle | null } {
  const pipeline = parsePipeline(text, file);
  const scope = { input, steps: {} };
  const { concurrency, throttle } = pipeline;
  return {
    concurrency: concurrency && { group: interpolate(concurrency.group, scope), policy: concurrencyPolicy(file, concurrency, scope) },
    throttle: throttle && {
      limit: throttle.limit,
      periodMs: throttle.periodMs,
      key: interpolate(throttle.key, scope),
      burst: throttle.burst,
      drop: throttle.policy === 'drop',
    },
  };
}
