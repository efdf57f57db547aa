import { describe, expect, it } from 'vitest';
import { fixture } from './fixtures.js';
import type { Job } from '../../src/pipeline/types.js';

/** A job with every optional part left out, so each expectation shows only what its document says. */
function job(fields: Partial<Job> & Pick<Job, 'name'>): Job {
  return {
    dependsOn: [],
    if: null,
    steps: null,
    script: null,
    approval: null,
    fanOut: null,
    retry: null,
    concurrency: null,
    ...fields,
  };
}

describe('the recipe pipelines', () => {
  it('refund: two approval gates with timeouts, and jobs that check the timed_out flags', () => {
    expect(fixture('refund')).toEqual({
      name: 'refund',
      concurrency: null,
      throttle: null,
      outputs: {},
      jobs: [
        job({ name: 'ask', approval: { prompt: 'Refund order 1042, EUR 480?', timeout: '2d', form: [], notify: null, approvers: null } }),
        job({
          name: 'escalate',
          dependsOn: ['ask'],
          if: '${{ steps.ask.output.timed_out }}',
          steps: [{ name: 'page-lead', run: 'echo "no answer on the refund for order 1042, asking the team lead"' }],
        }),
        job({
          name: 'ask_lead',
          dependsOn: ['escalate'],
          if: '${{ steps.ask.output.timed_out }}',
          approval: { prompt: "Refund order 1042, EUR 480? The first reviewer didn't answer.", timeout: '1d', form: [], notify: null, approvers: null },
        }),
        job({
          name: 'refund',
          dependsOn: ['ask_lead'],
          if: '${{ !steps.ask.output.timed_out || !steps.ask_lead.output.timed_out }}',
          steps: [{ name: 'refund', run: 'echo "refunded order 1042"' }],
        }),
        job({
          name: 'give_up',
          dependsOn: ['ask_lead'],
          if: '${{ steps.ask.output.timed_out && steps.ask_lead.output.timed_out }}',
          steps: [{ name: 'close', run: 'echo "nobody answered, refund for order 1042 left open"' }],
        }),
      ],
    });
  });

  it('deploy-prod: one run at a time through a concurrency group', () => {
    expect(fixture('deploy-prod')).toEqual({
      name: 'deploy-prod',
      concurrency: { group: 'deploy-prod', policy: 'queue' },
      throttle: null,
      outputs: {},
      jobs: [
        job({
          name: 'deploy',
          steps: [
            { name: 'deploy', run: 'echo "deploy started $(date +%T)"; sleep 4; echo "deploy done $(date +%T)"' },
          ],
        }),
      ],
    });
  });

  it('enrich: a throttle of six a minute per tenant, burst and policy defaulted', () => {
    expect(fixture('enrich')).toEqual({
      name: 'enrich',
      concurrency: null,
      throttle: { limit: 6, periodMs: 60_000, key: 'crm-${{ input.tenant }}', burst: 1, policy: 'queue' },
      outputs: {},
      jobs: [
        job({
          name: 'call',
          steps: [{ name: 'call', run: 'echo "called the CRM for ${{ input.tenant }} at $(date +%T)"' }],
        }),
      ],
    });
  });
});
