import { afterAll, describe, expect, it } from 'vitest';
import { recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

describe('the recorded result size limit', () => {
  it('given --max-result-bytes 100, when a step prints 200 bytes, then the call fails saying to record a path or an id, and nothing is recorded for it', async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, {
      'big.sh': `spool step small -- echo fits
spool step big -- sh -c 'printf "%0200d" 0'
spool step after -- echo "not reached"
`,
    });

    const { code, output } = await spool(['run', 'big.sh', '--data-dir', dataDir, '--max-result-bytes', '100'], {
      cwd: dir,
    });

    expect(output).toContain("step 'big' printed 200 bytes, over the 100-byte limit");
    expect(output).toContain('record its path or an id');
    expect(output).not.toContain('not reached');
    expect(code).toBe(1);
    const { run, journal } = await recorded(dataDir, runIdOf(output));
    expect(run?.status).toBe('failed');
    expect(journal.filter((entry) => entry.kind === 'result').map((entry) => entry.name)).toEqual(['small']);
    expect(journal.some((entry) => entry.name === 'after')).toBe(false);
  }, 120_000);
});

describe('the recorded value size limit', () => {
  it.each([
    ['an annotation', `spool annotate "$big"`, 'the annotation is 200 bytes'],
    ['a state value', `spool state set k "$big"`, 'state set value is 200 bytes'],
    ['an output', `spool output set report "$big"`, "output 'report' is 200 bytes"],
    ['an event payload', `spool event emit big.one --payload "\\"$big\\""`, "event 'big.one' payload is 200 bytes"],
  ])('given --max-result-bytes 100, when a script records %s of 200 bytes, then the call fails naming it, and nothing is kept', async (_, call, message) => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, { 'big.sh': `big=$(printf '%0200d' 0)\nspool step small -- echo fits\n${call}\nspool step after -- echo "not reached"\n` });

    const { code, output } = await spool(['run', 'big.sh', '--data-dir', dataDir, '--max-result-bytes', '100'], { cwd: dir });

    expect(output).toContain(`${message}, over the 100-byte limit for a recorded value`);
    expect(output).not.toContain('not reached');
    expect(code).toBe(1);
    const { run, journal } = await recorded(dataDir, runIdOf(output));
    expect(run?.status).toBe('failed');
    expect(journal.map((entry) => `${entry.kind} ${entry.verb} ${entry.name}`)).toEqual(['call step small', 'result step small']);
    expect(run?.outputs ?? {}).toEqual({});
  }, 120_000);
});
