import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { linesOf, spool, tempDir } from '../support/spool.js';
import { useDevServer } from '../support/dev.js';

const first = useDevServer();

describe('a second spool dev on a busy port', () => {
  it('given the port is taken, then it says so in one line and exits 69, never "listening" with no socket', async () => {
    const port = new URL(first.url).port;

    const second = await spool(['dev', '--port', port, '--data-dir', join(tempDir(), 'data')], { cwd: tempDir() });

    expect(linesOf(second.output)).toEqual([`spool: port ${port} on 127.0.0.1 is in use (by another spool dev?); pick another with --port`]);
    expect(second.code).toBe(69);
  }, 60_000);
});
