import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

describe('spool run --fresh-dir', () => {
  it('given a script that leaves a file and sleeps, when run with --fresh-dir, then each pass starts in a new, empty directory, as a pod would', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'a.sh': `echo "pass $SPOOL_PASS in $PWD: $(ls -A | grep -v '^.spool$' | tr '\\n' ' ')"
touch left-by-$SPOOL_PASS
spool sleep 200ms
`,
    });

    const { code, output } = await spool(['run', 'a.sh', '--fresh-dir', '--data-dir', `${dir}/data`], { cwd: dir });

    expect(code).toBe(0);
    const passes = [...output.matchAll(/^pass (\d) in (\S+): (.*)$/gm)].map(([, pass, cwd, files]) => ({ pass, cwd, files: files?.trim() }));
    expect(passes.map((each) => [each.pass, each.files])).toEqual([['1', ''], ['2', '']]);
    expect(new Set(passes.map((each) => each.cwd)).size).toBe(2);
    expect(passes.every((each) => each.cwd !== dir)).toBe(true);
    expect(runIdOf(output)).toMatch(/^dev:default:run-/);
  });
});
