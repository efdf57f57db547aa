import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cliOk, finalLog, submit, useDevServer } from '../support/dev.js';
import { tempDir, writeFiles } from '../support/spool.js';

/** A run's artifacts for people: `spool status` lists them, the HTTP API lists and downloads them. */

const dev = useDevServer();

describe('artifacts in spool status and the HTTP API', () => {
  it('given a run that put two artifacts, then status lists them, GET .../artifacts describes them and GET .../artifacts/:name gives the bytes', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'a.sh': `head -c 1200000 /dev/zero | tr '\\0' 'x' > big.txt
spool artifact put reports/big.txt big.txt
echo '{"ok":true}' | spool artifact put summary.json -
`,
    });
    const id = await submit(dev.url, dir, 'a.sh');
    await finalLog(dev.url, id, 60_000);
    const sha = createHash('sha256').update(Buffer.alloc(1_200_000, 'x')).digest('hex');

    const status = await cliOk(dev.url, dir, ['status', id]);
    const listed = (await (await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/artifacts`)).json()) as { artifacts: { name: string; size: number; sha256: string }[] };
    const download = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/artifacts/${encodeURIComponent('reports/big.txt')}`);
    const bytes = Buffer.from(await download.arrayBuffer());
    const missing = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/artifacts/nope`);

    expect(status).toContain(`artifacts       reports/big.txt  1200000 bytes  sha256 ${sha.slice(0, 12)}  text/plain\n`);
    expect(status).toMatch(/^ {16}summary\.json {2}12 bytes {2}sha256 [0-9a-f]{12} {2}application\/json$/m);
    expect(listed.artifacts.map(({ name, size, sha256 }) => [name, size, sha256])).toEqual([
      ['reports/big.txt', 1_200_000, sha],
      ['summary.json', 12, createHash('sha256').update('{"ok":true}\n').digest('hex')],
    ]);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/plain');
    expect(download.headers.get('etag')).toBe(`"${sha}"`);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="big.txt"');
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toBe(`artifact 'nope' of run ${id} not found`);
  }, 120_000);
});
