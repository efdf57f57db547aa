import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { poll, submit, useDevServer, waitForRun } from '../support/dev.js';
import { SPOOL_BIN, tempDir, writeFiles } from '../support/spool.js';

const dev = useDevServer();

/**
 * Runs `spool ARGS` with stdout a pipe whose reader has gone (a FIFO opened read-write, then a
 * write end, then the read-write end closed): its first write fails with EPIPE, as when `head -1`
 * has read its line and exited. Answers the exit code and what it wrote to stderr.
 */
async function withReaderGone(dir: string, args: string[]): Promise<{ code: number; stderr: string }> {
  const quoted = [process.execPath, SPOOL_BIN, ...args].map((word) => `'${word}'`).join(' ');
  const script = `mkfifo pipe; exec 3<>pipe; exec 4>pipe; exec 3<&-; ${quoted} >&4 2>stderr.txt; echo $? > code.txt`;
  // Not execFileSync: the dev server answering `spool runs` lives in this process.
  await promisify(execFile)('bash', ['-c', script], { cwd: dir, env: { ...process.env, SPOOL_SERVER: dev.url } });
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
  return { code: Number(read('code.txt')), stderr: read('stderr.txt') };
}

describe('a control verb whose reader stops early', () => {
  it('given stdout is a pipe nobody reads any more, then runs, journal and completion exit 141 quietly, with no stack trace', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'hi.sh': 'spool step hi -- echo hi\n' });
    const id = await submit(dev.url, dir, 'hi.sh');
    await poll('the run to end', () => waitForRun(dev.url, id));

    for (const args of [['runs'], ['journal', id], ['completion', 'bash']]) {
      const ended = await withReaderGone(tempDir(), args);
      expect(ended, `spool ${args.join(' ')}`).toEqual({ code: 141, stderr: '' });
    }
  }, 120_000);
});
