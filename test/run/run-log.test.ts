import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SPOOL_BIN, removeTempDirs, runIdOf, spool, tempDir, withStore, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/** A run's log as the store keeps it (what `spool logs` and the run page show): each pass's bytes, as latin1. */
async function storedLog(dataDir: string, runId: string): Promise<string[]> {
  const pieces = await withStore(dataDir, (store) => store.readLogs(runId));
  const passes: string[] = [];
  for (const piece of pieces) {
    const bytes = piece.base64 ? Buffer.from(piece.base64, 'base64') : Buffer.from(piece.text);
    passes[piece.pass - 1] = (passes[piece.pass - 1] ?? '') + bytes.toString('latin1');
  }
  return passes;
}

const sortedLines = (text: string): string[] => text.split(/(?<=\n)/).sort();

const SCRIPT = [
  'spool step greet -- echo hello',
  'echo "on stdout $SPOOL_PASS"',
  'echo "on stderr $SPOOL_PASS" >&2',
  'spool sleep 200ms',
  "printf 'caf\\351\\n'",
  '',
].join('\n');

/** `spool run` keeps its run's log in the store (issue 28, item 13): it printed the log and kept none. */
describe("spool run's log", () => {
  it('given stdout and stderr in one place, when the run ends, then the store has each pass\'s log in the order it was printed, bytes as printed', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'a.sh': SCRIPT });

    const { code, output } = await spool(['run', 'a.sh', '--data-dir', `${dir}/data`], { cwd: dir });

    expect(code).toBe(0);
    expect(output).toContain('hello\non stdout 1\non stderr 1\n');
    expect(await storedLog(`${dir}/data`, runIdOf(output))).toEqual(['hello\non stdout 1\non stderr 1\n', 'on stdout 2\non stderr 2\ncaf\xe9\n']);
  });

  it('given stdout and stderr apart, then each still gets only its own lines, and the store gets both', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'a.sh': SCRIPT });

    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SPOOL_BIN, 'run', 'a.sh', '--data-dir', `${dir}/data`], {
      cwd: dir,
      encoding: 'latin1',
    });

    expect(stdout).toBe('hello\non stdout 1\non stdout 2\ncaf\xe9\n');
    expect(stderr).toContain('on stderr 1\n');
    expect(stderr).toContain('on stderr 2\n');
    expect(stderr).not.toContain('on stdout');
    const kept = (await storedLog(`${dir}/data`, runIdOf(stderr))).map(sortedLines);
    expect(kept).toEqual([
      ['hello\n', 'on stderr 1\n', 'on stdout 1\n'],
      ['caf\xe9\n', 'on stderr 2\n', 'on stdout 2\n'],
    ]);
  });
});
