import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { admissionRules } from '../../src/pipeline/admission.js';
import { parsePipeline } from '../../src/pipeline/parse.js';
import { gateTimeoutMs } from '../../src/pipeline/settings.js';

/** Settings computed with `${{ }}`: a gate's timeout and the concurrency policy, as examples/ uses them. */

const example = (name: string) => readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8');
const doc = (...lines: string[]) => `${lines.join('\n')}\n`;
const refusal = (text: string): string => {
  try {
    parsePipeline(text, 'p.yaml');
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe("a gate's timeout", () => {
  const [ask, , askLead] = parsePipeline(example('refund.yaml'), 'refund.yaml').jobs;
  const timeout = (job: typeof ask, input: unknown) => job?.approval && gateTimeoutMs(job.name, job.approval, { input, steps: {} });

  it("given no input, then examples/refund.yaml waits the seed's 2d and 1d", () => {
    expect(timeout(ask, null)).toBe(2 * 86_400_000);
    expect(timeout(askLead, null)).toBe(86_400_000);
  });

  it('given a timeout in the input, then the gate waits that long', () => {
    expect(timeout(ask, { ask_timeout: '30s' })).toBe(30_000);
    expect(timeout(askLead, { lead_timeout: '1h30m' })).toBe(5_400_000);
  });

  it('given a value that is no duration, then one line names the job, the value and the expression', () => {
    expect(() => timeout(ask, { ask_timeout: 'soon' })).toThrow(
      "'timeout' of job 'ask' is 'soon' for this run (${{ input.ask_timeout || '2d' }}); it must be a duration longer than 0, like 30s, 5m, 2d",
    );
    expect(() => timeout(ask, { ask_timeout: '0s' })).toThrow("is '0s' for this run");
  });

  it('given text around the expression, then the whole text is the duration', () => {
    const [gate] = parsePipeline(doc('name: x', 'jobs:', '  a:', '    approval:', '      prompt: ok?', "      timeout: ${{ input.hours }}h"), 'p.yaml').jobs;
    expect(timeout(gate, { hours: 3 })).toBe(3 * 3_600_000);
  });

  it('given an expression that reads a job the gate does not depend on, then the document is refused', () => {
    const text = doc('name: x', 'jobs:', '  a:', '    script: x', '  b:', '    approval:', '      prompt: ok?', '      timeout: ${{ steps.a.output.t }}');
    expect(refusal(text)).toMatch(/^p\.yaml:8:\d+: .*'a'/);
  });
});

describe('the concurrency policy', () => {
  const policy = (input: unknown) => admissionRules(example('deploy-prod.yaml'), 'deploy-prod.yaml', input).concurrency?.policy;

  it("given no input, then examples/deploy-prod.yaml queues, as the seed's document does", () => {
    expect(policy(null)).toBe('queue');
  });

  it('given a policy in the input, then the run is admitted under it', () => {
    expect(policy({ policy: 'cancel-running' })).toBe('cancel-running');
    expect(policy({ policy: 'skip' })).toBe('skip');
  });

  it('given a policy that does not exist, then the submit is refused in one line naming the file and the value', () => {
    expect(() => policy({ policy: 'sometimes' })).toThrow(
      "deploy-prod.yaml: 'concurrency.policy' is 'sometimes' for this run's input (${{ input.policy || 'queue' }}); it must be one of queue, cancel-running, skip",
    );
  });

  it('given a policy that reads a job, then the document is refused: the policy is decided before any job runs', () => {
    const text = doc('name: x', 'concurrency:', '  group: g', '  policy: ${{ steps.a.output.p }}', 'jobs:', '  a:', '    script: x');
    expect(refusal(text)).toBe("p.yaml:4:15: 'concurrency.policy' is decided before any job runs, so it can read input but not steps.a.output.p");
  });

  it('given text around the expression, then the document is refused', () => {
    const text = doc('name: x', 'concurrency:', '  group: g', '  policy: q-${{ input.p }}', 'jobs:', '  a:', '    script: x');
    expect(refusal(text)).toBe("p.yaml:4:11: 'policy' must be queue, cancel-running or skip, or ${{ }} over input that yields one");
  });
});
