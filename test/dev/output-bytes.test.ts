import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliOk, get, submit, useDevServer, waitForRun } from '../support/dev.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * Output is bytes (issue 28, bugs 3 and 4; DESIGN §9): a NUL or text that is not UTF-8 on a script's
 * stdout, or in a step's, is kept in the log and the journal, and a replay gives back the same bytes.
 */
const dev = useDevServer();

describe('output that is not plain text, under spool dev', () => {
  it("given a script that prints a NUL and a byte that is not UTF-8 and a step that does too, when it replays after a sleep, then the run succeeds, its log keeps the bytes and the step's bytes come back the same", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'bytes.sh': `printf 'x\\0y\\351\\n'
spool step s -- printf 'caf\\351\\000z' > "${dir}/seen.$SPOOL_PASS"
spool sleep 200ms
echo done
`,
    });
    const id = await submit(dev.url, dir, 'bytes.sh');
    const run = await waitForRun(dev.url, id);

    expect(run.status).toBe('succeeded');
    const want = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x00, 0x7a]);
    expect(readFileSync(`${dir}/seen.1`).toString('hex')).toBe(want.toString('hex'));
    expect(readFileSync(`${dir}/seen.2`).toString('hex')).toBe(want.toString('hex'));
    const { logs } = await get<{ logs: { pass: number; text: string; base64?: string }[] }>(dev.url, `/runs/${encodeURIComponent(id)}/logs`);
    const bytesOf = (pass: number): Buffer =>
      Buffer.concat(logs.filter((line) => line.pass === pass).map((line) => (line.base64 ? Buffer.from(line.base64, 'base64') : Buffer.from(line.text))));
    expect(bytesOf(1).toString('hex')).toBe(Buffer.from('x\0y\xe9\n', 'latin1').toString('hex'));
    expect(bytesOf(2).toString('hex')).toBe(Buffer.from('x\0y\xe9\ndone\n', 'latin1').toString('hex'));
    expect(logs.map((line) => line.text).join('')).toContain('x\ufffdy\ufffd\n');
    const printed = await cliOk(dev.url, dir, ['logs', id]);
    expect(printed).toContain('done');
  });
});
