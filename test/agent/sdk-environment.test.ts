import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * The seed's managed environment: scripts import the SDKs with nothing installed (src/agent/script-env.ts).
 * Not an in-script suite: SDK scripts speak the socket, never the spool client, so once is enough.
 */
describe('the SDKs in a script with nothing installed', () => {
  const run = (dir: string, file: string) => spool(['run', file, '--data-dir', join(dir, 'data')], { cwd: dir, env: { PYTHONPATH: undefined, NODE_OPTIONS: undefined, VIRTUAL_ENV: undefined } });

  it('given a .py script, then `from hyperspool import script` works and step_fn records its value', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fn.py': 'from hyperspool import script\nprint("got", script.step_fn("answer", lambda: {"n": 42})["n"])\n' });
    const { code, output } = await run(dir, 'fn.py');
    expect(output).toContain('got 42\n');
    expect(code).toBe(0);
  });

  it("given a .mjs script, then `import { stepFn } from '@hyperspool/sdk'` works (ESM ignores NODE_PATH)", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fn.mjs': "import { stepFn } from '@hyperspool/sdk';\nconsole.log('got', (await stepFn('answer', () => ({ n: 42 }))).n);\n" });
    const { code, output } = await run(dir, 'fn.mjs');
    expect(output).toContain('got 42\n');
    expect(code).toBe(0);
  });

  it('given a .cjs script, then import(@hyperspool/sdk) works too', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fn.cjs': "void import('@hyperspool/sdk').then((sdk) => console.log('stepFn is a', typeof sdk.stepFn));\n" });
    const { output } = await run(dir, 'fn.cjs');
    expect(output).toContain('stepFn is a function\n');
  });

  it("given the script's own node_modules has @hyperspool/sdk, then that one is imported", async () => {
    const dir = tempDir();
    const own = join(dir, 'node_modules', '@hyperspool', 'sdk');
    mkdirSync(own, { recursive: true });
    writeFiles(own, { 'package.json': '{"name":"@hyperspool/sdk","type":"module","exports":"./index.js"}', 'index.js': "export const which = 'own';\n" });
    writeFiles(dir, { 'which.mjs': "import { which } from '@hyperspool/sdk';\nconsole.log('sdk:', which);\n" });
    const { output } = await run(dir, 'which.mjs');
    expect(output).toContain('sdk: own\n');
  });

  it("given an active virtualenv with its own hyperspool, then the script imports that one", async () => {
    const dir = tempDir();
    const venv = join(dir, 'venv');
    execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
    const sitePackages = execFileSync(join(venv, 'bin', 'python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
    mkdirSync(join(sitePackages, 'hyperspool'), { recursive: true });
    writeFiles(join(sitePackages, 'hyperspool'), { '__init__.py': "which = 'own'\n" });
    writeFiles(dir, { 'which.py': 'import hyperspool\nprint("sdk:", hyperspool.which)\n' });
    const { output } = await spool(['run', 'which.py', '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env: { PYTHONPATH: undefined, VIRTUAL_ENV: venv, PATH: `${join(venv, 'bin')}:${process.env.PATH ?? ''}` },
    });
    expect(output).toContain('sdk: own\n');
  });
});
