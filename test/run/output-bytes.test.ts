import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { afterAll } from 'vitest';
import { recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/** A step's output is bytes (issue 28, bug 4): what it printed comes back byte for byte on every replay. */
describe("a step's output that is not plain text", () => {
  it.each([
    ['not UTF-8', "printf 'caf\\351'", '636166e9'],
    ['with a NUL', "printf 'x\\000y\\n'", '7800790a'],
    ['UTF-8 text', "printf 'caf\\303\\251'", '636166c3a9'],
  ])('given a step that prints bytes %s, when the next pass replays it, then the script gets the same bytes', async (_, command, hex) => {
    const dir = tempDir();
    writeFiles(dir, { 'a.sh': `spool step s -- ${command} > "${dir}/seen.$SPOOL_PASS"\nspool sleep 200ms\n` });

    const { code, output } = await spool(['run', 'a.sh', '--data-dir', `${dir}/data`], { cwd: dir });

    expect(code).toBe(0);
    expect(readFileSync(`${dir}/seen.1`).toString('hex')).toBe(hex);
    expect(readFileSync(`${dir}/seen.2`).toString('hex')).toBe(hex);
    const { journal } = await recorded(`${dir}/data`, runIdOf(output));
    const result = journal.find((entry) => entry.kind === 'result' && entry.name === 's')?.data ?? {};
    const kept = typeof result.stdoutBase64 === 'string' ? Buffer.from(result.stdoutBase64, 'base64') : Buffer.from(String(result.stdout));
    expect(kept.toString('hex')).toBe(hex);
  });
});
