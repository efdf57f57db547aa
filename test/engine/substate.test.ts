import { describe, expect, it } from 'vitest';
import { substateOf } from '../../src/engine/substate.js';
import type { RunRecord } from '../../src/store/types.js';

/** The seeds' names for what a run waits for: "shows as queued", "the awaiting_lease substate". */
describe("a run's substate", () => {
  const run = (fields: Partial<RunRecord>) =>
    ({ status: 'waiting', awaiting: null, wait: null, interpreter: 'bash -eu', ...fields }) as RunRecord;

  it.each([
    [
      'a pipeline behind its concurrency group',
      run({ interpreter: 'pipeline', wait: { kind: 'lease', group: 'deploy-prod' } }),
      'queued',
    ],
    [
      'a run over its throttle, not started',
      run({ status: 'pending', awaiting: 'throttle crm-acme until 2030-01-01T00:00:10.000Z' }),
      'queued',
    ],
    ['a script waiting for a lock', run({ wait: { kind: 'lease', group: 'customer-7' } }), 'awaiting_lease'],
    ['a sleep', run({ wait: { kind: 'timer', until: '2030-01-01T00:00:00.000Z' } }), 'awaiting_timer'],
    ['a signal', run({ wait: { kind: 'signal', name: 'approve' } }), 'awaiting_signal'],
    [
      'a pipeline waiting for its jobs',
      run({ interpreter: 'pipeline', wait: { kind: 'children', runIds: ['r'] } }),
      'awaiting_children',
    ],
    ['a run due now', run({ status: 'pending' }), null],
    ['a running run', run({ status: 'running' }), null],
    ['an ended run', run({ status: 'succeeded', wait: { kind: 'lease', group: 'g' } }), null],
  ])('given %s, then %s', (_, given, substate) => {
    expect(substateOf(given)).toBe(substate);
  });
});
