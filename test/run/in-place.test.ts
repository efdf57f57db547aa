import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * "spool run and spool dev run the file in place from the directory you submit it in": a script's
 * relative imports and the node_modules beside it resolve from the file, not from a copy.
 */
describe('a script runs in place', () => {
  it('given ./app/main.mjs importing ./lib.mjs and a package from app/node_modules, when run from the directory above, then both resolve', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'app', 'node_modules', 'greeting'), { recursive: true });
    writeFiles(dir, {
      'app/main.mjs': "import { name } from './lib.mjs';\nimport greet from 'greeting';\nconsole.log(greet(name));\n",
      'app/lib.mjs': "export const name = 'spool';\n",
      'app/node_modules/greeting/package.json': '{"name":"greeting","type":"module","exports":"./index.js"}',
      'app/node_modules/greeting/index.js': 'export default (name) => `hello, ${name}`;\n',
    });

    const { code, output } = await spool(['run', 'app/main.mjs', '--data-dir', join(dir, 'data')], { cwd: dir });

    expect(output).toContain('hello, spool\n');
    expect(code).toBe(0);
  }, 60_000);

  it('given a script changed while its run waits, then the next pass says so and runs the script the run recorded', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'edit.sh': `spool step edit -- sh -c 'echo "echo this line was added later" >> edit.sh'
spool sleep 1s
spool step after -- echo "after the sleep"
`,
    });

    const { code, output } = await spool(['run', 'edit.sh', '--data-dir', join(dir, 'data')], { cwd: dir });

    expect(output).toContain('spool: edit.sh changed since this run started; this pass runs the script the run recorded\n');
    expect(output).toContain('after the sleep\n');
    expect(output).not.toContain('this line was added later');
    expect(code).toBe(0);
  }, 60_000);
});
