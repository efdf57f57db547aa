import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScriptProcess } from '../../src/agent/script-process.js';
import { isAlive, readLines, removeTempDirs, startSpool, tempDir, writeFiles } from '../support/spool.js';
import { poll, startDev, submit, waitForRun } from '../support/dev.js';
import { propertyRuns } from '../support/property.js';

/**
 * Scripts started by the native client's launcher (src/agent/launcher.ts) rather than forked from
 * this process: their outputs, exits and ending as a forked script's, and a launcher that goes
 * takes its scripts' passes with it (they replay) and is replaced by a new one.
 */

afterAll(() => removeTempDirs());

const parentOf = (pid: number): number => Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim());
const commandOf = (pid: number): string => execFileSync('ps', ['-o', 'comm=', '-p', String(pid)], { encoding: 'utf8' }).trim();

function start(dir: string, script: string): { script: ScriptProcess; log: string; close: () => void } {
  const log = join(dir, 'pass.log');
  const fd = openSync(log, 'a');
  const process = new ScriptProcess(['sh', '-c', script], { cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdout: fd, stderr: fd });
  return { script: process, log, close: () => closeSync(fd) };
}

describe('scripts started by the launcher', () => {
  it('given random text in an argument, a variable and the directory name (any Unicode but NUL), then the script gets each as the same UTF-8 a forked one does', async () => {
    const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).filter((each) => !each.includes('\0'));
    await fc.assert(
      // A directory name within NAME_MAX (255 bytes), which a few long graphemes would pass.
      fc.asyncProperty(text, text, text.filter((each) => Buffer.byteLength(each) <= 200), async (argument, variable, name) => {
        const dir = join(tempDir(), name.replaceAll('/', '_').replace(/^\.\.?$/, '_'));
        mkdirSync(dir);
        const log = join(dir, 'out');
        const fd = openSync(log, 'a');
        const script = new ScriptProcess(['sh', '-c', 'printf "%s|%s|%s" "$1" "$V" "$(pwd)"', 'sh', argument], {
          cwd: dir,
          env: { PATH: '/usr/bin:/bin', V: variable },
          stdout: fd,
          stderr: fd,
        });
        const exit = await script.exited;
        closeSync(fd);
        expect(exit).toEqual({ code: 0, signal: null });
        expect(readFileSync(log)).toEqual(Buffer.from(`${argument}|${variable}|${dir}`));
      }),
      propertyRuns('launcher: arguments, variables, directories', 40),
    );
  }, 60_000);

  it('given a script that writes to both outputs and exits 3, then both land in its log file in order, it exits 3, and its parent is the launcher', async () => {
    const dir = tempDir();
    const { script, log, close } = start(dir, 'echo $PPID > parent; echo out; echo err >&2; echo "in $(pwd)"; exit 3');
    expect(await script.exited).toEqual({ code: 3, signal: null });
    close();
    expect(readFileSync(log, 'utf8')).toBe(`out\nerr\nin ${dir}\n`);
    const launcher = Number(readLines(join(dir, 'parent'))[0]);
    expect(launcher).not.toBe(process.pid);
    expect(commandOf(launcher)).toBe('spool');
    expect(parentOf(launcher)).toBe(process.pid);
  });

  it("given a script, then it holds none of the launcher's sockets (its requests and answers)", async () => {
    const dir = tempDir();
    const { script, close } = start(dir, 'ls -l /proc/$$/fd/ > fds');
    expect(await script.exited).toEqual({ code: 0, signal: null });
    close();
    // Node's pipes to a child are sockets; the script's own outputs here are a file.
    expect(readFileSync(join(dir, 'fds'), 'utf8')).not.toContain('socket:');
  });

  it("given Ctrl-C, SIGTERM or SIGHUP sent to the launcher (a terminal's signal to the server's group), then it lives on: those are the server's to act on", async () => {
    const dir = tempDir();
    const first = start(dir, 'echo $PPID > parent');
    await first.script.exited;
    first.close();
    const launcher = Number(readLines(join(dir, 'parent'))[0]);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.kill(launcher, signal);
    const second = start(dir, 'sleep 0.2; echo $PPID > again');
    expect(await second.script.exited).toEqual({ code: 0, signal: null });
    second.close();
    expect(Number(readLines(join(dir, 'again'))[0])).toBe(launcher);
  });

  it('given a script killed by a signal, or a program that is not there, then it says SIGTERM, or 127', async () => {
    const dir = tempDir();
    const killed = start(dir, 'kill -TERM $$');
    expect(await killed.script.exited).toEqual({ code: null, signal: 'SIGTERM' });
    killed.close();
    const missing = new ScriptProcess(['no-such-interpreter-here'], { cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdout: 'inherit', stderr: 'inherit' });
    expect(await missing.exited).toEqual({ code: 127, signal: null });
  });

  it('given a script ended at once, before the launcher has said its pid, then it is ended when it starts', async () => {
    const dir = tempDir();
    const { script, close } = start(dir, 'sleep 30');
    script.end();
    expect(await script.exited).toEqual({ code: null, signal: 'SIGTERM' });
    close();
  });

  it('given the launcher killed while a script runs, then that script ends, said killed and lost, and the next script has a new launcher', async () => {
    const dir = tempDir();
    const { script, close } = start(dir, 'echo $$ > self; echo $PPID > parent; sleep 30');
    const [self, launcher] = await poll('the script to start', () => {
      const pids = [...readLines(join(dir, 'self')), ...readLines(join(dir, 'parent'))].map(Number);
      return pids.length === 2 ? pids : null;
    });
    process.kill(launcher!, 'SIGKILL');
    expect(await script.exited).toEqual({ code: null, signal: 'SIGKILL', lost: 'the launcher that started the script ended; the run replays' });
    close();
    await poll('the script to be gone', () => !isAlive(self!), 5_000);

    const second = start(dir, 'echo $PPID > next-parent');
    expect(await second.script.exited).toEqual({ code: 0, signal: null });
    second.close();
    const next = Number(readLines(join(dir, 'next-parent'))[0]);
    expect(next).not.toBe(launcher);
    expect(commandOf(next)).toBe('spool');
  });
});

const FLOW = `spool step one -- sh -c 'echo ran >> one.count; echo one'
echo $PPID >> parents
[ -e replayed ] || { touch replayed; sleep 30; }
spool step two -- echo two
`;

describe('a launcher that goes mid-pass', () => {
  it('given spool run, when its launcher is killed while the script runs, then the pass is lost and replays at once, and the run succeeds with its recorded step run once', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'flow.sh': FLOW });
    const runner = startSpool(['run', 'flow.sh', '--data-dir', join(dir, 'data')], { cwd: dir });
    const launcher = await poll('the script to be past its first step', () => Number(readLines(join(dir, 'parents'))[0]) || null, 30_000);
    expect(commandOf(launcher)).toBe('spool');
    process.kill(launcher, 'SIGKILL');
    const { code, output } = await runner.done;
    expect(code, output).toBe(0);
    expect(output).toContain('succeeded');
    expect(readLines(join(dir, 'one.count'))).toEqual(['ran']);
    expect(readLines(join(dir, 'parents'))).toHaveLength(2);
  }, 60_000);

  it('given spool dev, when its launcher is killed while a script runs, then the pass is lost, the run replays under a new launcher and succeeds, and its recorded step ran once', async () => {
    const dev = await startDev();
    try {
      const dir = tempDir();
      writeFiles(dir, { 'flow.sh': FLOW });
      const id = await submit(dev.url, dir, 'flow.sh');
      const launcher = await poll('the script to be past its first step', () => Number(readLines(join(dir, 'parents'))[0]) || null);
      expect(commandOf(launcher)).toBe('spool');
      process.kill(launcher, 'SIGKILL');
      const run = await waitForRun(dev.url, id, ['succeeded']);
      expect(run.passes).toBe(2);
      expect(readLines(join(dir, 'one.count'))).toEqual(['ran']);
      const second = Number(readLines(join(dir, 'parents'))[1]);
      expect(second).not.toBe(launcher);
      expect(commandOf(second)).toBe('spool');
    } finally {
      await dev.close();
    }
  }, 60_000);
});
