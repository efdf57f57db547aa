import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  linesOf,
  readLines,
  recorded,
  removeTempDirs,
  runIdOf,
  spool,
  tempDir,
  withStore,
  writeFiles,
} from '../support/spool.js';

afterAll(removeTempDirs);

/** One data dir for the file; the runs in it go one at a time. */
const dataDir = join(tempDir(), 'data');

/** Runs a script in a fresh directory on the file's data dir. */
async function runScript(script: string, extraArgs: string[] = []) {
  const dir = tempDir();
  writeFiles(dir, { 'bad.sh': script });
  const result = await spool(['run', 'bad.sh', '--data-dir', dataDir, ...extraArgs], { cwd: dir });
  const id = runIdOf(result.output);
  return { ...result, dir, id, ...(await recorded(dataDir, id)) };
}

const countRuns = (): Promise<number> =>
  withStore(dataDir, async (store) => (await store.listRuns({ limit: 10_000 })).length);

describe('a bad in-script call', () => {
  it.each([
    ['an unknown verb', `spool frobnicate`, /^spool: unknown command 'frobnicate'/],
    ['no verb', `spool`, /^spool: no verb given; 'spool --help' lists the verbs a script can call$/],
    ['only --', `spool --`, /^spool: no verb given; 'spool --help' lists the verbs a script can call$/],
    ['an unknown flag', `spool step a --lable x -- true`, /^spool step: Unknown option '--lable'/],
    ['a duration in words', `spool sleep 5 minutes`, /^spool sleep: unexpected argument 'minutes'/],
    ['a duration with an unknown unit', `spool sleep 5x`, /^spool sleep: bad duration '5x'/],
    ['a step without --', `spool step a echo hi`, /^spool step: missing '--' before the command/],
    ['an empty step name', `spool step '' -- true`, /^bad step request: 'name' must not be empty$/],
    ['a step name with a newline', `spool step "$(printf 'a\\nb')" -- true`, /^bad step request: 'name' must not contain control characters/],
    ['an empty entity', `spool state set k v --entity ''`, /^bad state.set request: 'entity' must not be empty$/],
    ['an unknown activity command', `spool activity frob`, /^spool activity: unknown activity command 'frob'; use submit, run, wait, collect or wait-all/],
    ['a negative duration', `spool sleep -1s`, /^spool sleep: a duration cannot be negative: '-1s'/],
    ['a duration longer than 100 years', `spool sleep 999999999999d`, /^spool sleep: duration '999999999999d' is too long; the longest is 36525d/],
    [
      'an incr of a cell that holds no number',
      `spool state set n abc && spool state incr n`,
      /^state cell 'n' holds 'abc', not a whole number; incr only counts whole numbers$/,
    ],
    [
      'a spawn of a file that is not UTF-8',
      `printf 'echo ok\\necho caf\\351\\n' > latin1.sh && spool spawn latin1.sh`,
      /^spool spawn: latin1.sh is not UTF-8 text \(line 2\); Hyperspool runs a script as the text it keeps/,
    ],
    [
      'malformed JSON in a payload',
      `spool event emit x --payload '{bad'`,
      /^spool event emit: --payload is not valid JSON/,
    ],
  ])(
    'given %s, then the call exits 2 with one line on stderr and nothing is recorded',
    async (_, call, message) => {
      const { output, dir, run, journal } = await runScript(
        `rc=0; ${call} 2>call-stderr.txt || rc=$?\necho "rc=$rc"\nspool step after -- echo fine\n`,
      );

      expect(output).toContain('rc=2\n');
      const stderr = readLines(join(dir, 'call-stderr.txt'));
      expect(stderr).toHaveLength(1);
      expect(stderr[0]).toMatch(message);
      // The refused call took no position: the step after it is the first call of the run.
      expect(callsOf(journal)).toEqual(['step after']);
      expect(run?.status).toBe('succeeded');
    },
    120_000,
  );

  it('given an activity name used twice, then the second submit is refused with exit 2, the run fails, and one submit is recorded', async () => {
    const { output, dir, run, journal } = await runScript(
      `spool activity submit x -- true\nspool activity submit x -- true 2>call-stderr.txt\necho "not reached"\n`,
    );

    const stderr = readLines(join(dir, 'call-stderr.txt'));
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^activity name 'x' is already used in this run \(call 1\)/);
    expect(output).not.toContain('not reached');
    expect(output).toMatch(/failed: script exited 2\n$/);
    expect(run?.status).toBe('failed');
    expect(callsOf(journal)).toEqual(['activity.submit x']);
  }, 120_000);

  it('given a step whose program name is over the system\'s limit, then the step and an activity fail as not found (exit 127) with one line, recorded as their results', async () => {
    // Node's spawn throws ENAMETOOLONG rather than emitting it: the Node client printed a stack and exited 1 (fuzz-args, FC_SEED=2065137990).
    const { dir, journal } = await runScript(
      `spool step long -- ${'x'.repeat(300)} 2>>call-stderr.txt || echo "exit $?"\nspool activity run long-act -- ${'x'.repeat(300)} || echo "exit $?"\n`,
    );

    const stderr = readLines(join(dir, 'call-stderr.txt'));
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^spool: cannot run 'x+': command not found$/);
    const result = journal.find((entry) => entry.kind === 'result' && entry.name === 'long');
    expect(result?.data.exitCode).toBe(127);
    // So is an activity's, which the run's own executor starts.
    const activity = journal.find((entry) => entry.kind === 'result' && entry.name === 'long-act');
    expect(activity?.data.exitCode).toBe(127);
  }, 120_000);

  it('given a second bare lock in one run, then it is refused with exit 2, the run fails, and only the first is recorded', async () => {
    const { output, dir, run, journal } = await runScript(
      `spool lock a\nspool lock b 2>call-stderr.txt\necho "not reached"\n`,
    );

    const stderr = readLines(join(dir, 'call-stderr.txt'));
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^this run already holds the lock 'a' \(call 1\)/);
    expect(output).not.toContain('not reached');
    expect(output).toMatch(/failed: script exited 2\n$/);
    expect(run?.status).toBe('failed');
    expect(callsOf(journal)).toEqual(['lock a']);
  }, 120_000);
});

describe('a bad spool run', () => {
  it('given a script that is not UTF-8, then spool run exits 2 naming the line, and creates no run', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'latin1.sh': Buffer.from('echo ok\necho caf\xe9\n', 'latin1') });
    const before = await countRuns();

    const { code, output } = await spool(['run', 'latin1.sh', '--data-dir', dataDir], { cwd: dir });

    expect(linesOf(output)).toEqual([
      'spool: latin1.sh is not UTF-8 text (line 2); Hyperspool runs a script as the text it keeps, so save the file as UTF-8',
    ]);
    expect(code).toBe(2);
    expect(await countRuns()).toBe(before);
  }, 120_000);

  it('given a project name with a newline or a colon, then spool run exits 2 and creates no run', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'ok.sh': 'spool step a -- echo hi\n' });
    const before = await countRuns();

    const { code, output } = await spool(['run', 'ok.sh', '--data-dir', dataDir, '--project', 'a/b\nc'], { cwd: dir });

    expect(linesOf(output)).toEqual([
      `spool: --project "a/b\\nc" is not a project name: 1 to 63 letters, digits, '.', '_' or '-', starting and ending with a letter or a digit`,
    ]);
    expect(code).toBe(2);
    expect((await spool(['run', 'ok.sh', '--data-dir', dataDir, '--project', 'team:a'], { cwd: dir })).code).toBe(2);
    expect(await countRuns()).toBe(before);
  }, 120_000);

  it('given --max-result-bytes that is not a number, then spool run exits 2 and creates no run', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'ok.sh': 'spool step a -- echo hi\n' });
    const before = await countRuns();

    const { code, output } = await spool(['run', 'ok.sh', '--data-dir', dataDir, '--max-result-bytes', 'abc'], { cwd: dir });

    expect(linesOf(output)).toEqual(["spool: --max-result-bytes takes a number of bytes, not 'abc'"]);
    expect(code).toBe(2);
    expect(await countRuns()).toBe(before);
  }, 120_000);

  it('given a script file that does not exist, then spool run exits 2 with one line and creates no run', async () => {
    const dir = tempDir();
    const before = await countRuns();

    const { code, output } = await spool(['run', 'nope.sh', '--data-dir', dataDir], { cwd: dir });

    expect(linesOf(output)).toEqual(['spool: nope.sh: no such file']);
    expect(code).toBe(2);
    expect(await countRuns()).toBe(before);
  }, 120_000);

  it('given a .py script and no python3 on PATH, then spool run exits 2 with one line and creates no run', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'hello.py': 'print("hello")\n' });
    // A PATH holding node and nothing else, so python3 is missing wherever the host keeps it.
    const onlyNode = join(dir, 'bin');
    mkdirSync(onlyNode);
    symlinkSync(process.execPath, join(onlyNode, 'node'));
    const before = await countRuns();

    const { code, output } = await spool(['run', 'hello.py', '--data-dir', dataDir], {
      cwd: dir,
      env: { PATH: onlyNode },
    });

    expect(linesOf(output)).toEqual(['spool: hello.py needs python3, which is not installed here (not found on PATH)']);
    expect(code).toBe(2);
    expect(await countRuns()).toBe(before);
  }, 120_000);
});

describe('an in-script verb outside any script', () => {
  it('given no agent (SPOOL_SOCKET unset), when spool step is called, then it exits 69 with one line', async () => {
    const { code, output } = await spool(['step', 'a', '--', 'true'], { cwd: tempDir() });

    expect(linesOf(output)).toHaveLength(1);
    expect(output).toMatch(/^spool step: no agent to talk to \(SPOOL_SOCKET is not set\)/);
    expect(code).toBe(69);
  }, 30_000);

  it('given SPOOL_SOCKET naming no socket, when spool step is called, then it exits 69 (unavailable) with one line', async () => {
    const dir = tempDir();
    const missing = join(dir, 'no-agent.sock');
    const { code, output } = await spool(['step', 'a', '--', 'true'], { cwd: dir, env: { SPOOL_SOCKET: missing } });

    expect(linesOf(output)).toEqual([`spool: cannot reach the agent at ${missing}: connect ENOENT ${missing}`]);
    expect(code).toBe(69);
  }, 30_000);
});

describe('a bad SPOOL_* setting', () => {
  it.each([
    ['SPOOL_CLIENT', 'bogus', "spool: SPOOL_CLIENT takes 'native' or 'node', not 'bogus'"],
    ['SPOOL_MAX_ARTIFACT_BYTES', '1GB', "spool: SPOOL_MAX_ARTIFACT_BYTES takes a number of bytes, not '1GB'"],
    ['SPOOL_MAX_RUN_ARTIFACT_BYTES', '-1', "spool: SPOOL_MAX_RUN_ARTIFACT_BYTES takes a number of bytes, not '-1'"],
  ])('given %s=%s, then spool run, spool resume and spool dev refuse it in one line with exit 2, and no run is recorded', async (name, value, line) => {
    const dir = tempDir();
    writeFiles(dir, { 'ok.sh': 'spool step a -- echo hi\n' });
    const before = await countRuns();
    const env = { [name]: value };

    const run = await spool(['run', 'ok.sh', '--data-dir', dataDir], { cwd: dir, env });
    const resume = await spool(['resume', 'dev:default:run-none', '--data-dir', dataDir], { cwd: dir, env });
    const dev = await spool(['dev', '--port', '0', '--data-dir', dataDir], { cwd: dir, env });

    for (const refused of [run, resume, dev]) {
      expect(linesOf(refused.output)).toEqual([line]);
      expect(refused.code).toBe(2);
    }
    expect(await countRuns()).toBe(before);
  }, 120_000);
});
