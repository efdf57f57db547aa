import { describe, expect, it } from 'vitest';
import { GroupedWrites } from '../../src/store/grouped-writes.js';

/** A write that records each group it was given and answers each input doubled; 0 fails a group. */
function doubling() {
  const groups: number[][] = [];
  const write = async (inputs: number[]) => {
    groups.push(inputs);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (inputs.includes(0)) throw new Error('zero is refused');
    return inputs.map((n) => n * 2);
  };
  return { groups, writes: new GroupedWrites<number, number>(write, (n) => n, 10) };
}

describe('GroupedWrites', () => {
  it('given writes while one is in flight, then they go together after it, within the limit, each answered its own', async () => {
    const { groups, writes } = doubling();
    const answers = await Promise.all([1, 2, 3, 4, 5, 6, 20].map((n) => writes.add(n)));
    expect(answers).toEqual([2, 4, 6, 8, 10, 12, 40]);
    // 1 went at once; 2+3+4 fit the limit of 10, 5+6 would not; 20 is over the limit alone and still goes.
    expect(groups).toEqual([[1], [2, 3, 4], [5], [6], [20]]);
  });

  it('given a write alone, then it goes at once, waiting for nothing', async () => {
    const { groups, writes } = doubling();
    const answer = writes.add(3);
    expect(groups).toEqual([[3]]);
    expect(await answer).toBe(6);
  });

  it('given a group with one bad input, then each is written alone and only that caller fails', async () => {
    const { groups, writes } = doubling();
    const answers = await Promise.allSettled([1, 2, 0, 3].map((n) => writes.add(n)));
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual([2, 4, 'zero is refused', 6]);
    expect(groups).toEqual([[1], [2, 0, 3], [2], [0], [3]]);
  });
});
