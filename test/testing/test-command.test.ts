import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPOOL_BIN, removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * `spool test` (docs/testing-workflows.md): workflows against their test cases on an in-memory
 * store with a virtual clock. Each test here runs the built CLI as a user would.
 */

afterAll(() => removeTempDirs());

const repo = join(import.meta.dirname, '..', '..');

/** The CLI's stdout (the verdicts, or the JSON) and stderr (a refusal) apart, and its exit code. */
function spool(args: string[], options: { cwd: string }): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(SPOOL_BIN, args, { cwd: options.cwd, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ stdout, stderr, code: error ? Number(error.code ?? 1) : 0 });
    });
  });
}

/** A deploy that waits up to 7 days for a go-ahead, with a step whose command leaves a mark when it really runs. */
const deploy = (mark: string): string => `build=$(spool step build -- sh -c 'echo ran >> ${mark}; echo b-real')
spool output set build "$build"
if answer=$(spool wait signal go --timeout 7d); then
  spool step ship -- echo "shipping $build to $answer"
  spool output set target "$answer"
else
  spool step give-up -- echo "no go-ahead"
fi
`;

const deployCases = (target: string): string => `- name: go-ahead on day 3
  signals:
    - { at: 3d, name: go, payload: prod }
  stubs:
    steps:
      build: { stdout: b-42 }
  expect:
    outcome: succeeded
    outputs: { build: b-42, target: ${target} }
    steps: [build, ship]
    time: 3d
    log: shipping b-42 to prod
- name: nobody says go
  stubs:
    steps:
      build: { stdout: b-42 }
  expect:
    steps: [build, give-up]
    time: 7d
`;

describe('spool test', () => {
  it('runs a script that sleeps 14 days to success on the virtual clock, with no test file', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'long.sh': 'spool sleep 14d\nspool step after -- echo woke\n' });
    const result = await spool(['test', 'long.sh'], { cwd: dir });
    expect(result.stdout).toContain('PASS long.sh › runs to success (14d virtual, ');
    expect(result.stdout).toContain('1 case: 1 passed, 0 failed');
    expect(result.code).toBe(0);
  });

  it('fails a script that fails after a 2h sleep, printing what was expected, what happened and the journal', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'late.sh': 'spool step first -- echo one\nspool sleep 2h\necho "disk full" >&2\nexit 3\n' });
    const result = await spool(['test', 'late.sh'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL late.sh › runs to success (2h virtual, ');
    expect(result.stdout).toContain('expected the run to have succeeded, but it failed: script exited 3');
    expect(result.stdout).toMatch(/its journal:\n\s+POS\s+KIND\s+VERB\s+NAME\s+DATA\n\s+1\s+call\s+step\s+first/);
    expect(result.stdout).toMatch(/\d\s+call\s+sleep/);
    expect(result.stdout).toContain('disk full');
    expect(result.stdout).toContain('1 case: 0 passed, 1 failed');
  });

  it('delivers a signal at a virtual time, stubs a step (its command never runs) and checks outputs, steps and time; one changed expectation fails', async () => {
    const dir = tempDir();
    const mark = join(dir, 'mark');
    writeFiles(dir, { 'deploy.sh': deploy(mark), 'deploy.test.yaml': deployCases('prod') });
    const passing = await spool(['test', 'deploy.sh'], { cwd: dir });
    expect(passing.stdout).toContain('PASS deploy.sh › go-ahead on day 3 (3d virtual, ');
    expect(passing.stdout).toContain('PASS deploy.sh › nobody says go (7d virtual, ');
    expect(passing.code).toBe(0);
    expect(existsSync(mark)).toBe(false);

    writeFiles(dir, { 'deploy.test.yaml': deployCases('staging') });
    const failing = await spool(['test', 'deploy.sh', '--junit', 'report.xml'], { cwd: dir });
    expect(failing.stdout).toContain('FAIL deploy.sh › go-ahead on day 3');
    expect(failing.stdout).toContain('expected output target to be "staging", but it was "prod"');
    expect(failing.stdout).toContain('2 cases: 1 passed, 1 failed');
    expect(failing.code).toBe(1);
    const junit = readFileSync(join(dir, 'report.xml'), 'utf8');
    expect(junit).toContain('<testsuite name="deploy.sh" tests="2" failures="1"');
    expect(junit).toContain('<failure message="expected output target to be &quot;staging&quot;, but it was &quot;prod&quot;">');
    expect(junit).toMatch(/<testcase classname="deploy.sh" name="nobody says go" time="[\d.]+"\/>/);
  });

  it("runs the recipes that wait (the trial, the poll's schedule, the debounce's burst, the refund's approvals) from their test files under examples/", async () => {
    const result = await spool(['test', 'examples'], { cwd: repo });
    for (const recipe of ['examples/trial.sh', 'examples/poll.sh', 'examples/reindex.sh', 'examples/refund.yaml']) expect(result.stdout).toContain(`PASS ${recipe} › `);
    expect(result.stdout).not.toContain('FAIL');
    expect(result.code).toBe(0);
  });

  it('gives each case as JSON with --json, and takes a case from --case', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'wait.sh': 'v=$(spool wait event plan.upgraded --timeout 1d)\nspool output set plan "$v"\n' });
    const result = await spool(['test', 'wait.sh', '--json', '--case', '{events: [{at: 5h, type: plan.upgraded, payload: {plan: pro}}], expect: {outputs: {plan: "{\\"plan\\":\\"pro\\"}"}}}'], { cwd: dir });
    const [report] = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(report).toMatchObject({ workflow: 'wait.sh', case: 'case 1', passed: true, failures: [], outcome: 'succeeded', virtualMs: 5 * 3_600_000, runs: 1 });
    expect(result.code).toBe(0);
  });

  it('says a run waits for what the test never delivers, and names a delivery nothing took', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'stuck.sh': 'spool wait signal approve\n',
      'stuck.test.yaml': '- name: no answer\n  expect: { outcome: succeeded }\n- name: late\n  signals: [{ at: 1h, name: approve }, { at: 2h, name: approve }]\n',
    });
    const result = await spool(['test', 'stuck.sh'], { cwd: dir });
    expect(result.stdout).toContain('expected the run to have succeeded, but it was waiting for signal approve, which the test never delivers');
    expect(result.stdout).toContain("the signal 'approve' at 2h was not delivered: nothing was left to take it");
    expect(result.code).toBe(1);
  });

  it("backs an activity's retries off on the virtual clock: a 1h backoff, then 2h, is exactly 3h, the first attempt due at the start", async () => {
    const dir = tempDir();
    const count = join(dir, 'count');
    writeFiles(dir, {
      'flaky.sh': `n=$(spool activity run flaky --requires shell --attempts 4 --backoff 1h --retry-on-exit 75 -- sh -c 'c=$(cat ${count} 2>/dev/null || echo 0); c=$((c+1)); echo $c > ${count}; [ $c -ge 3 ] || exit 75; echo ok-$c')\nspool output set n "$n"\n`,
    });
    const result = await spool(['test', 'flaky.sh', '--case', '{expect: {outputs: {n: ok-3}, time: 3h}}'], { cwd: dir });
    expect(result.stdout).toContain('PASS flaky.sh › case 1 (3h virtual, ');
    expect(result.code).toBe(0);
  });

  it('with --fresh-dir runs each pass in a new, empty directory, so a script leaning on a file an earlier pass left fails', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'lean.sh': "spool step make -- sh -c 'echo built > out.txt'\nspool sleep 1d\ncat out.txt\n" });
    const same = await spool(['test', 'lean.sh'], { cwd: dir });
    expect(same.stdout).toContain('PASS lean.sh › runs to success (1d virtual, ');
    const fresh = await spool(['test', 'lean.sh', '--fresh-dir'], { cwd: dir });
    expect(fresh.stdout).toContain('FAIL lean.sh › runs to success (1d virtual, ');
    expect(fresh.stdout).toContain('out.txt: No such file or directory');
    expect(fresh.code).toBe(1);
  });

  it('refuses bad input in one line with exit 2, running nothing', async () => {
    const dir = tempDir();
    const mark = join(dir, 'mark');
    writeFiles(dir, {
      'a.sh': `touch ${mark}\n`,
      'a.test.yaml': '- name: x\n  expect: { outcomes: succeeded }\n',
      'b.sh': 'true\n',
      'b.test.yaml': '- signals: [{ at: soon, name: go }]\n',
    });
    mkdirSync(join(dir, 'empty'));
    const cases: [string[], string][] = [
      [['test', 'a.sh'], "spool: a.test.yaml: case 'x': expect: unknown key 'outcomes' (known: outcome, error, outputs, steps, state, time, runs, log)"],
      [['test', 'b.sh'], "spool: b.test.yaml: case 'case 1': signals[0].at: bad duration 'soon'; use a form like 500ms, 30s, 5m, 2h, 14d or 1h30m"],
      [['test', 'nope.sh'], 'spool: nope.sh: no such file or directory'],
      [['test', 'empty'], 'spool: no workflow with a test file (NAME.test.yaml) in empty'],
      [['test', 'b.sh', '--case', '[]'], 'spool: --case: no cases'],
      [['test', 'b.sh', 'a.sh', '--case', '{}'], 'spool: --case gives the cases of one workflow; name one file'],
    ];
    for (const [args, line] of cases) {
      const result = await spool(args, { cwd: dir });
      expect(result.stderr.trim(), args.join(' ')).toBe(line);
      expect(result.stdout).toBe('');
      expect(result.code).toBe(2);
    }
    expect(existsSync(mark)).toBe(false);
  });
});
