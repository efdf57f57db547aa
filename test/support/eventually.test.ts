import { describe, expect, it } from 'vitest';
import { GaveUp, eventually, untilPhase } from './eventually.js';

/** The suite's waits fail at once on a final phase (issue 29, item 6), and still ride out a passing error. */
describe('eventually', () => {
  it('given a probe that gives up, then it fails at once with its reason, probed once', async () => {
    let probes = 0;
    const waiting = eventually('the run to succeed', () => {
      probes += 1;
      throw new GaveUp('it ended Failed');
    }, 600_000);
    await expect(waiting).rejects.toThrow('gave up waiting for the run to succeed: it ended Failed');
    expect(probes).toBe(1);
  });

  it('given a probe that throws something else, then it is tried again until it answers', async () => {
    let probes = 0;
    const value = await eventually('the API server', () => {
      probes += 1;
      if (probes < 3) throw new Error('ECONNREFUSED');
      return Promise.resolve('up');
    }, 600_000, 1);
    expect([value, probes]).toEqual(['up', 3]);
  });

  it('given a Run that ends in another final phase, then untilPhase fails at once saying how it ended and why', async () => {
    const phases = ['Pending', 'Running', 'Failed'];
    let reads = 0;
    const read = (): Promise<{ status: { phase: string; message: string } }> =>
      Promise.resolve({ status: { phase: phases[Math.min(reads++, phases.length - 1)] ?? '', message: "step 'charge' exited 1" } });
    const waiting = untilPhase('run refund-1', read, 'Succeeded', 600_000, { explain: () => Promise.resolve('its log: charging') });
    await expect(waiting).rejects.toThrow("gave up waiting for run refund-1 Succeeded: it ended Failed: step 'charge' exited 1\nits log: charging");
    expect(reads).toBe(3);
  });

  it('given a Run that reaches the phase, then untilPhase answers it', async () => {
    let reads = 0;
    const read = (): Promise<{ status: { phase: string } }> => Promise.resolve({ status: { phase: reads++ < 2 ? 'Running' : 'Succeeded' } });
    expect(await untilPhase('run a-1', read, 'Succeeded', 600_000)).toEqual({ status: { phase: 'Succeeded' } });
  });
});
