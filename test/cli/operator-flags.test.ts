import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, spool, tempDir } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * The operator's flags that this stop added (--shards, --max-warm-pods, --warm-pod-ttl): a bad
 * value is one line and exit 2, before the operator reaches for its database or the cluster.
 */
describe('spool operator, given a bad flag', () => {
  it.each([
    [['--shards', 'abc'], "--shards takes a whole number of at least 1, not 'abc'"],
    [['--shards', '0'], "--shards takes a whole number of at least 1, not '0'"],
    [['--max-warm-pods', '-1'], "--max-warm-pods takes a whole number, not '-1'"],
    [['--warm-pod-ttl', 'soon'], "--warm-pod-ttl takes a duration such as 1h, 7d or 90d, or never, not 'soon'"],
  ])('%j is refused in one line, exit 2', async (flag, line) => {
    const { code, output } = await spool(['operator', ...flag, '--database-url', 'postgres://nobody@127.0.0.1:1/none'], { cwd: tempDir() });
    expect(code).toBe(2);
    expect(output).toBe(`spool: ${line}\n`);
  });
});
