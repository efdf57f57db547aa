import { afterAll, describe, expect, it } from 'vitest';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * The seams between passes (issue 28, bugs 1 and 2): a replayed call reads no file and no stdin (a
 * new pod has none of the last pass's files), and a refusal the script caught on one pass is the
 * same refusal on the next, never a determinism error. Each script sleeps, so the calls before the
 * sleep are replayed by a second pass.
 */
async function runTwoPasses(script: string, env: Record<string, string> = {}) {
  const dir = tempDir();
  const dataDir = `${dir}/data`;
  writeFiles(dir, { 'a.sh': script });
  const result = await spool(['run', 'a.sh', '--data-dir', dataDir], { cwd: dir, env: { MARK: `${dir}/mark`, ...env } });
  const runId = runIdOf(result.output);
  const { run, journal } = await recorded(dataDir, runId);
  return { ...result, run, calls: callsOf(journal), journal };
}

describe('a replayed artifact put reads nothing', () => {
  it("given the issue's script (a step makes f.txt, put, rm f.txt, sleep), when the next pass replays the put, then it succeeds without the file", async () => {
    const { code, output, run, calls } = await runTwoPasses(`set -e
spool step make -- sh -c 'echo hi > f.txt'
spool artifact put a f.txt
rm -f f.txt
spool sleep 1s
spool artifact get a -
`);

    expect(output).not.toContain('cannot read');
    expect(output).toMatch(/^hi$/m);
    expect(code).toBe(0);
    expect(run?.passes).toBe(2);
    expect(calls).toEqual(['step make', 'artifact.put a', 'sleep']);
  });

  it('given a put from stdin, when the next pass replays it with stdin closed, then it succeeds without reading stdin', async () => {
    const { code, output, run, calls } = await runTwoPasses(`set -e
if [ -e "$MARK" ]; then spool artifact put b - <&-; else printf data | spool artifact put b -; touch "$MARK"; fi
spool sleep 1s
spool artifact get b -; echo
`);

    expect(output).toMatch(/^data$/m);
    expect(code).toBe(0);
    expect(run?.passes).toBe(2);
    expect(calls).toEqual(['artifact.put b', 'sleep']);
  });

  it('given a put whose file is missing, when the script catches the refusal, then the next pass meets the same refusal and the run succeeds', async () => {
    const { code, output, run, calls } = await runTwoPasses(`set +e
spool artifact put y missing.bin
echo "exit $?"
spool step b -- echo b
spool sleep 1s
`);

    expect(output.match(/^spool artifact put: cannot read missing\.bin: no such file\nexit 2$/gm)).toHaveLength(2);
    expect(output).not.toContain('determinism');
    expect(code).toBe(0);
    expect(run?.passes).toBe(2);
    expect(calls).toEqual(['step b', 'sleep']);
  });
});

describe('a refusal the script catches is the same refusal on the next pass', () => {
  it.each([
    ['from a file', 'head -c 3000 /dev/zero > big.bin; spool artifact put huge big.bin'],
    ['from stdin', 'head -c 3000 /dev/zero | spool artifact put huge -'],
  ])('given an artifact over SPOOL_MAX_ARTIFACT_BYTES put %s and caught, when the next pass reaches it, then it is refused again, not a determinism error', async (_, put) => {
    const { code, output, run, calls } = await runTwoPasses(`set +e
spool step a -- echo a
${put}
echo "exit $?"
spool step b -- echo b
spool sleep 1s
`, { SPOOL_MAX_ARTIFACT_BYTES: '2000' });

    expect(output.match(/artifact 'huge' is over the 2000-byte limit for one artifact \(SPOOL_MAX_ARTIFACT_BYTES\); nothing was stored\nexit 1/g)).toHaveLength(2);
    expect(output).not.toContain('determinism');
    expect(code).toBe(0);
    expect(run?.passes).toBe(2);
    expect(calls).toEqual(['step a', 'step b', 'sleep']);
  });

  it('given an artifact over the per-run limit put and caught, when the next pass reaches it, then it is refused again', async () => {
    const { code, output, calls } = await runTwoPasses(`set +e
head -c 3000 /dev/zero > one.bin
spool artifact put one one.bin
spool artifact put two one.bin
echo "exit $?"
spool step b -- echo b
spool sleep 1s
`, { SPOOL_MAX_RUN_ARTIFACT_BYTES: '5000' });

    expect(output.match(/artifact 'two' would bring this run's artifacts to 6000 bytes/g)).toHaveLength(2);
    expect(output).not.toContain('determinism');
    expect(code).toBe(0);
    expect(calls).toEqual(['artifact.put one', 'step b', 'sleep']);
  });

  it('given state incr on a cell that holds text, caught, when the next pass reaches it, then it is refused again; a recorded incr whose cell became text since still replays', async () => {
    const { code, output, calls } = await runTwoPasses(`set +e
spool state incr n
spool state set c text
spool state incr c
echo "exit $?"
spool state set n later-text
spool step b -- echo b
spool sleep 1s
`);

    expect(output.match(/state cell 'c' holds 'text', not a whole number; incr only counts whole numbers\nexit 2/g)).toHaveLength(2);
    expect(output).not.toContain('determinism');
    expect(code).toBe(0);
    expect(calls).toEqual(['state.incr n', 'step b', 'sleep']);
  });

  it('given a put from stdin under the limit where the journal recorded another call, when the pass reaches it, then it is still a determinism error', async () => {
    const { code, output } = await runTwoPasses(`set +e
if [ -e "$MARK" ]; then printf small | spool artifact put x -; else spool step b -- echo b; touch "$MARK"; fi
spool sleep 1s
`);

    expect(output).toContain('determinism error at call 1: the journal recorded `step b` there, but this pass reached `artifact.put x`');
    expect(code).not.toBe(0);
  });
});

describe('a replayed call or spawn reads no file', () => {
  it('given a child script a step made, which removes itself, when the next pass replays the call, then it answers the recorded outputs without the file', async () => {
    // The call suspends the first pass; the child, running in the same directory, removes its file.
    const { code, output, run, calls } = await runTwoPasses(`set -e
spool step make -- sh -c 'printf "rm child.sh\\nspool output set y built\\n" > child.sh'
spool call child.sh
`);

    expect(output).not.toContain('cannot read');
    expect(output.match(/^\{"y":"built"\}$/gm)).toHaveLength(1);
    expect(code).toBe(0);
    expect(run?.passes).toBe(2);
    expect(calls).toEqual(['step make', 'call']);
  });

  it('given a spawned child script that is gone on the next pass, when the pass replays the spawn, then it answers the same run id', async () => {
    const { code, output, calls } = await runTwoPasses(`set -e
spool step make -- sh -c 'echo true > child.sh'
id=$(spool spawn child.sh)
rm -f child.sh
spool sleep 1s
echo "spawned $id"
`);

    expect(output).not.toContain('cannot read');
    expect(output).toMatch(/^spawned \S+:run-\w+$/m);
    expect(code).toBe(0);
    expect(calls).toEqual(['step make', 'spawn', 'sleep']);
  });

  it.each([
    ['a missing file', 'spool call missing.sh', /^spool call: cannot read missing\.sh: no such file\nexit 2$/gm],
    ['a file that is not UTF-8', "printf 'echo caf\\351\\n' > latin1.sh; spool spawn latin1.sh", /^spool spawn: latin1\.sh is not UTF-8 text \(line 1\)[^\n]*\nexit 2$/gm],
    ['a pipeline document that is not valid', "printf 'name: bad\\njobs:\\n  one:\\n    stepz: []\\n' > bad.yaml; spool call bad.yaml", /^spool call: bad\.yaml:4:5: [^\n]+\nexit 2$/gm],
  ])('given %s, caught, when the next pass reaches the call, then it is refused again in one line, taking no position', async (_, refused, message) => {
    const { code, output, calls } = await runTwoPasses(`set +e
${refused}
echo "exit $?"
spool step b -- echo b
spool sleep 1s
`);

    expect(output.match(message)).toHaveLength(2);
    expect(output).not.toContain('determinism');
    expect(code).toBe(0);
    expect(calls).toEqual(['step b', 'sleep']);
  });
});
