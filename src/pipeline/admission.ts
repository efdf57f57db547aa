import { documentKind } from '../common/workflow-file.js';
import type { ConcurrencyRule, Throttle } from '../engine/admission.js';
import { parseGraph } from '../graph/parse.js';
import { interpolate } from './expressions.js';
import { parsePipeline } from './parse.js';
import { concurrencyPolicy } from './settings.js';

/** What a pipeline (or a graph: nothing) asks of admission, with its `${{ input.* }}` parts filled in from the run's input. */
export function admissionRules(text: string, file: string, input: unknown): { concurrency: ConcurrencyRule | null; throttle: Throttle | null } {
  // A graph asks nothing of admission; it is checked here all the same, so a bad one is refused at submit.
  if (documentKind(text) === 'graph') {
    parseGraph(text, file);
    return { concurrency: null, throttle: null };
  }
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
