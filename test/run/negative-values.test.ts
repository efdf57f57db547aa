import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * A negative number after an option is its value (`--by -3`): both clients called it ambiguous, as
 * Node's parseArgs does, so a counter could only go down with `--by=-3`. The replay verifier found
 * it (seed 1934002498).
 */
describe('a negative number as an option value', () => {
  it('given state incr --by -3 and --by=-1, then the counter goes down, and the next pass replays the same answers', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'a.sh': [
        'echo "pass $SPOOL_PASS: $(spool state incr c --by 5 --op up) $(spool state incr c --by -3 --op down) $(spool state incr c --by=-1 --op last)"',
        'spool sleep 200ms',
        '',
      ].join('\n'),
    });

    const { code, output } = await spool(['run', 'a.sh', '--data-dir', `${dir}/data`], { cwd: dir });

    expect(output).toContain('pass 1: 5 2 1\n');
    expect(output).toContain('pass 2: 5 2 1\n');
    expect(code).toBe(0);
  });
});
