import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECKED_OUT, project } from '../support/checkout-project.js';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

describe('spool checkout under spool run --with DIR', () => {
  it('given a project directory bundled with --with, when each pass checks out into an empty directory, then it gets the files beside the script, minus what .gitignore leaves out', async () => {
    const dir = project();
    const dataDir = tempDir();

    const { code, output } = await spool(['run', 'flow.sh', '--with', '.', '--data-dir', dataDir], { cwd: dir });

    expect(code).toBe(0);
    expect(output.match(/^helper says hi$/gm)).toHaveLength(2);
    expect(output).toContain('pass 1 config: {"env":"prod"}');
    expect(output).toContain('pass 2 config: {"env":"prod"}');
    expect(output.match(CHECKED_OUT)).toHaveLength(2);
    expect(output).toContain('spool checkout: 6 files into src');
  }, 120_000);

  it('given spool checkout with no DEST in a run started without --with, then it exits 2 saying how to bundle one', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'a.sh': 'set +e\nspool checkout\necho "exit $?"\n' });

    const { output } = await spool(['run', 'a.sh', '--data-dir', `${dir}/data`], { cwd: dir });

    expect(output).toContain("this run has no checkout: start it with 'spool run FILE --with DIR' or 'spool submit FILE --with DIR' to bundle the files beside the script\nexit 2");
  }, 120_000);

  it.each([
    ['a directory that is not there', ['--with', 'nowhere'], {}, '--with nowhere: no such directory'],
    [
      'files over SPOOL_MAX_CHECKOUT_BYTES',
      ['--with', '.'],
      { SPOOL_MAX_CHECKOUT_BYTES: '20' },
      "over the 20-byte limit for a checkout bundle (SPOOL_MAX_CHECKOUT_BYTES); list what to leave out in a .gitignore",
    ],
  ])('given --with %s, then spool run exits 2 in one line and records no run', async (_, args, env, message) => {
    const dir = project();
    const dataDir = join(dir, 'build', 'data');

    const { code, output } = await spool(['run', 'flow.sh', ...args, '--data-dir', dataDir], { cwd: dir, env });

    expect(output).toContain(message);
    expect(output).not.toContain('run: ');
    expect(code).toBe(2);
    expect(readdirSync(join(dir, 'build'))).toEqual(['out.o']);
  }, 120_000);

  it("given a script that puts an artifact under 'spool/', then it is refused in one line and nothing is recorded", async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, { 'a.sh': 'set +e\necho x > x\nspool artifact put spool/checkout.tar x\necho "exit $?"\n' });

    const { output } = await spool(['run', 'a.sh', '--data-dir', dataDir], { cwd: dir });

    expect(output).toContain("artifact names starting with 'spool/' are Hyperspool's own ('spool/checkout.tar'); choose another name\nexit 2");
    expect(callsOf((await recorded(dataDir, runIdOf(output))).journal)).toEqual([]);
  }, 120_000);
});
