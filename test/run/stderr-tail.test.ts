import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { failureDetail } from '../../src/operator/runs/failure-detail.js';
import { linesOf, processesMentioning, recorded, removeTempDirs, runIdOf, spool, tempDir, withStore, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * Runs a script of these lines with each pass in a new, empty directory (as each pass on a cluster
 * is a new pod), so nothing a pass left behind can stand in for what the journal kept.
 */
async function runFresh(lines: string[]) {
  const dir = tempDir();
  writeFiles(dir, { 'wf.sh': [...lines, ''].join('\n') });
  const dataDir = `${dir}/data`;
  const result = await spool(['run', 'wf.sh', '--data-dir', dataDir, '--fresh-dir'], { cwd: dir });
  return { ...result, dir, dataDir, id: runIdOf(result.output) };
}

/**
 * A failed step keeps the end of its stderr beside its result (DoneRequest.stderrTail): what the run
 * page, `spool status` and a Run's message say it failed with. It still reaches the log as it is
 * written, and a replay neither returns nor prints it again.
 */
describe("a failed step's stderr tail", () => {
  it('given steps that fail with stderr (one long, one not UTF-8) and one that succeeds, then only the failed ones keep a tail, cut to the last KiB at a line; the log has every line once across two passes', async () => {
    const { code, output, dataDir, id } = await runFresh([
      `spool step ok -- sh -c 'echo fine >&2; echo out'`,
      `spool step car -- sh -c 'echo trying; echo "no cars left" >&2; exit 3' || true`,
      `spool step long -- sh -c 'for i in $(seq 1 200); do echo "line $i of the long complaint" >&2; done; exit 1' || true`,
      `spool step bytes -- sh -c 'printf "bad \\377 \\000 byte\\n" >&2; exit 2' || true`,
      'spool sleep 1s',
      'echo after',
    ]);
    expect(code).toBe(0);
    // Each stderr line reached the log once: the second pass replays the steps and prints none of it.
    const lines = linesOf(output);
    for (const line of ['fine', 'no cars left', 'line 1 of the long complaint', 'line 200 of the long complaint']) expect(lines.filter((each) => each === line)).toHaveLength(1);

    const { journal } = await recorded(dataDir, id);
    const results = new Map(journal.filter((entry) => entry.kind === 'result' && entry.verb === 'step').map((entry) => [entry.name, entry.data]));
    expect(results.get('ok')).toEqual({ stdout: 'out\n', exitCode: 0 });
    expect(results.get('car')).toEqual({ stdout: 'trying\n', exitCode: 3, stderrTail: 'no cars left' });
    const long = String(results.get('long')?.stderrTail);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(1024);
    expect(long.startsWith('line ')).toBe(true);
    expect(long.endsWith('line 200 of the long complaint')).toBe(true);
    expect(results.get('bytes')?.stderrTail).toBe('bad \uFFFD \uFFFD byte');
  });

  it("given an activity whose command writes to stderr (a NUL, a byte that is not UTF-8) and exits 3, then its wait keeps the tail beside its result, answers as before on each pass, and the Run's message names the activity", async () => {
    // What the wait answers, on the first pass and on the replay after the sleep, each to a file
    // outside the passes' own directories.
    const waits = tempDir();
    const { code, output, dataDir, id } = await runFresh([
      `spool activity submit fetch -- sh -c 'echo partial; printf "raw \\000 \\377 bytes\\n" >&2; echo "upstream said 503" >&2; exit 3'`,
      `spool activity wait fetch > "${waits}/$(ls ${waits} | wc -l | tr -d " ")" 2>&1 || true`,
      'spool sleep 1s',
      'exit 1',
    ]);
    expect(code).toBe(1);
    // The command's stderr reached spool run's as it came.
    expect(linesOf(output)).toContain('upstream said 503');
    const answered = 'partial\nspool: activity fetch failed with exit 3 after 1 attempt\n';
    // A pass that reached the wait before the activity ended suspended there and wrote nothing (on
    // a loaded machine, the first); every pass after answers the same, the one after the sleep too.
    const passes = readdirSync(waits).sort((a, b) => Number(a) - Number(b)).map((file) => readFileSync(`${waits}/${file}`, 'utf8'));
    const answers = passes.slice(passes.findIndex((written) => written !== ''));
    expect(answers.length).toBeGreaterThanOrEqual(2);
    expect(answers).toEqual(answers.map(() => answered));
    const { journal } = await recorded(dataDir, id);
    expect(journal.find((entry) => entry.kind === 'result' && entry.verb === 'activity.wait')?.data).toEqual({
      stdout: 'partial\n',
      exitCode: 3,
      attempts: 1,
      stderr: 'spool: activity fetch failed with exit 3 after 1 attempt',
      stderrTail: 'raw \uFFFD \uFFFD bytes\nupstream said 503',
    });
    const message = await withStore(dataDir, async (store) => failureDetail(store, (await store.getRun(id))!));
    expect(message).toBe("script exited 1 (activity 'fetch' exited 3: upstream said 503)");
  });

  it("given activities of which two fail saying why, then `activity wait --all` keeps a line of each beside its result, answers as before on each pass, and the Run's message names them", async () => {
    const waits = tempDir();
    const { code, dataDir, id } = await runFresh([
      `spool activity submit a -- sh -c 'echo "a: first" >&2; echo "disk full" >&2; exit 3'`,
      'spool activity submit b -- true',
      `spool activity submit c -- sh -c 'printf "no \\377 route\\n" >&2; exit 4'`,
      `spool activity wait --all > "${waits}/$(ls ${waits} | wc -l | tr -d " ")" 2>&1 || true`,
      'spool sleep 1s',
      'exit 1',
    ]);
    expect(code).toBe(1);
    const passes = readdirSync(waits).sort((a, b) => Number(a) - Number(b)).map((file) => readFileSync(`${waits}/${file}`, 'utf8'));
    const answers = passes.slice(passes.findIndex((written) => written !== ''));
    expect(answers.length).toBeGreaterThanOrEqual(2);
    expect(answers).toEqual(answers.map(() => 'spool: 2 of 3 activities failed: a, c\n'));
    const { journal } = await recorded(dataDir, id);
    expect(journal.find((entry) => entry.kind === 'result' && entry.verb === 'activity.wait')?.data).toEqual({
      failed: ['a', 'c'],
      total: 3,
      exitCode: 1,
      stderrTail: 'a: disk full\nc: no \uFFFD route',
    });
    const message = await withStore(dataDir, async (store) => failureDetail(store, (await store.getRun(id))!));
    expect(message).toBe("script exited 1 (activity 'a, c' exited 1: c: no \uFFFD route)");
  });

  it('given a step that leaves a process in the background holding its stderr, then the step ends with its command, not with that process', async () => {
    const dir = tempDir();
    const marker = `held-${Date.now()}`;
    writeFiles(dir, { 'bg.sh': `spool step start -- sh -c 'sh -c "sleep 600; :" ${marker} > /dev/null & echo started'\necho after\n` });
    try {
      const { code, output } = await spool(['run', 'bg.sh', '--data-dir', `${dir}/data`], { cwd: dir });
      expect(code).toBe(0);
      expect(linesOf(output)).toContain('after');
    } finally {
      for (const pid of processesMentioning(marker)) process.kill(pid, 'SIGKILL');
    }
  }, 90_000);

  it("given the saga, then the Run's message names the failed step with its stderr's last line, not the compensation's output", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'saga.sh': `spool step book-flight -- echo FL-881\nspool step book-car -- sh -c 'echo "no cars left" >&2; exit 1' || { spool step cancel -- echo "cancelled FL-881"; exit 1; }\n`,
    });
    const { code, output } = await spool(['run', 'saga.sh', '--data-dir', `${dir}/data`], { cwd: dir });
    expect(code).toBe(1);
    const id = runIdOf(output);
    const message = await withStore(`${dir}/data`, async (store) => failureDetail(store, (await store.getRun(id))!));
    expect(message).toBe("script exited 1 (step 'book-car' exited 1: no cars left)");
  });
});
