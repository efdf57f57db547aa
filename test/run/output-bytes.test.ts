import { readdirSync, readFileSync } from 'node:fs';
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

/**
 * An activity's output is kept as a step's is: a NUL or bytes that are not UTF-8 (which PostgreSQL's
 * jsonb refused, failing the activity with "unsupported Unicode escape sequence") come back byte
 * for byte from its wait, and from the wait's replay in the next pass, which runs in a new, empty
 * directory (as a new pod would).
 */
describe("an activity's output that is not plain text", () => {
  it('given activities that print a NUL and a byte not UTF-8, submitted and run, when the next pass replays their waits, then the script gets the same bytes', async () => {
    const dir = tempDir();
    const seen = tempDir();
    writeFiles(dir, {
      'a.sh': [
        `spool activity submit nul -- printf 'x\\000y\\n'`,
        `spool activity wait nul > "${seen}/nul.$SPOOL_PASS"`,
        `spool activity run latin -- printf 'caf\\351' > "${seen}/latin.$SPOOL_PASS"`,
        'spool sleep 200ms',
        '',
      ].join('\n'),
    });

    const { code, output } = await spool(['run', 'a.sh', '--data-dir', `${dir}/data`, '--fresh-dir'], { cwd: dir });

    expect(code, output).toBe(0);
    // A pass that suspends at a wait (its activity not done yet) leaves an empty file: every pass
    // that got past it printed the same bytes, and at least one of them replayed the recorded wait.
    for (const [name, hex] of [['nul', '7800790a'], ['latin', '636166e9']]) {
      const printed = readdirSync(seen).filter((file) => file.startsWith(`${name}.`)).map((file) => readFileSync(`${seen}/${file}`).toString('hex'));
      expect(printed.filter(Boolean), name).toEqual([hex, hex, ...printed.filter(Boolean).slice(2).map(() => hex)]);
    }
    const { journal } = await recorded(`${dir}/data`, runIdOf(output));
    const kept = journal.filter((entry) => entry.kind === 'result' && 'exitCode' in entry.data).map((entry) => entry.data.stdoutBase64);
    expect(kept).toEqual([Buffer.from('x\0y\n').toString('base64'), Buffer.from('caf\xe9', 'latin1').toString('base64')]);
  });
});
