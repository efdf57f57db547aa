import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, getRun, journalOf, listRuns, startDev, submit, waitForRun, type JournalView } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import type { RunWithScript } from '../../src/api/responses.js';

/**
 * `spool rerun RUN [--from-step NAME]` (docs/testing-workflows.md): a new run of the same
 * definition; from a step, its journal starts with the old run's entries before that step, which
 * its passes replay, and the step and all after run fresh, with keys of their own.
 */

let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** Steps one and two print a random value and their idempotency key; `one` counts its executions in a file. */
const script = (count: string): string => `one=$(spool step one -- sh -c 'echo ran >> ${count}; echo "$(od -An -N8 -tx8 /dev/urandom | tr -d " ") $SPOOL_IDEMPOTENCY_KEY"')
spool output set one "$one"
spool step bytes -- printf '\\377\\376x'
two=$(spool step two -- sh -c 'echo "$(od -An -N8 -tx8 /dev/urandom | tr -d " ") $SPOOL_IDEMPOTENCY_KEY"')
spool output set two "$two"
three=$(spool step three -- sh -c 'echo "$SPOOL_IDEMPOTENCY_KEY"')
spool output set three "$three"
if [ -n "\${NEVER:-}" ]; then spool step four -- true; fi
`;

/** The journal as another run would hold it: the same entries, but the run id. */
const entries = (journal: JournalView[]): Omit<JournalView, 'runId'>[] => journal.map(({ runId, ...entry }) => (void runId, entry));
const key = (output: string | undefined): string => output?.split(' ').at(-1) ?? '';

describe('spool rerun of a spool dev run', () => {
  it("from step two: one is the old run's, two and after run fresh with new keys; the old journal is unchanged; each links to the other", async () => {
    const dir = tempDir();
    const count = join(dir, 'count');
    writeFiles(dir, { 'wf.sh': script(count) });
    const oldId = await submit(dev.url, dir, 'wf.sh');
    const old = await waitForRun(dev.url, oldId, ['succeeded']);
    const oldJournal = await journalOf(dev.url, oldId);

    const rerun = await cli(dev.url, dir, ['rerun', oldId, '--from-step', 'two']);
    expect(rerun.code, rerun.output).toBe(0);
    const newId = rerun.output.trim();
    expect(newId).toMatch(/^dev:default:run-[a-z0-9]{16}$/);
    const fresh = await waitForRun(dev.url, newId, ['succeeded']);

    // Step one was replayed, not run: its value and its key are the old run's.
    expect(readFileSync(count, 'utf8')).toBe('ran\n');
    expect(fresh.outputs.one).toBe(old.outputs.one);
    // Step two and after ran again: new random values, and keys of the new run.
    expect(fresh.outputs.two).not.toBe(old.outputs.two);
    expect(key(fresh.outputs.two)).toMatch(/^spool-[0-9a-f]{32}$/);
    expect(key(fresh.outputs.two)).not.toBe(key(old.outputs.two));
    expect(fresh.outputs.three).not.toBe(old.outputs.three);

    // The new journal starts with the old one's entries before step two, exactly (the bytes step's
    // stdout, which is not UTF-8, too), and goes on with its own.
    const newJournal = await journalOf(dev.url, newId);
    const twoAt = oldJournal.find((entry) => entry.verb === 'step' && entry.name === 'two')?.position ?? -1;
    expect(twoAt).toBe(3);
    expect(entries(newJournal.filter((entry) => entry.position < twoAt))).toEqual(entries(oldJournal.filter((entry) => entry.position < twoAt)));
    expect(newJournal.find((entry) => entry.name === 'bytes' && entry.kind === 'result')?.data.stdoutBase64).toBe(Buffer.from([0xff, 0xfe, 0x78]).toString('base64'));
    expect(newJournal.find((entry) => entry.name === 'two' && entry.kind === 'result')?.data).not.toEqual(oldJournal.find((entry) => entry.name === 'two' && entry.kind === 'result')?.data);
    expect(await journalOf(dev.url, oldId)).toEqual(oldJournal);

    // Links both ways: the new run names its source; the old run's detail lists its reruns.
    expect(fresh.rerunOf).toEqual({ runId: oldId, fromStep: 'two' });
    expect((await getRun(dev.url, oldId)).rerunOf).toBeNull();
    expect(((await getRun(dev.url, oldId)) as RunWithScript).reruns).toEqual([newId]);

    // From the top, with another input: nothing of the old journal, every step run again.
    const whole = await cli(dev.url, dir, ['rerun', oldId, '--input', '{"n":1}']);
    expect(whole.code, whole.output).toBe(0);
    const again = await waitForRun(dev.url, whole.output.trim(), ['succeeded']);
    expect(readFileSync(count, 'utf8')).toBe('ran\nran\n');
    expect(again.outputs.one).not.toBe(old.outputs.one);
    expect(again.input).toEqual({ n: 1 });
    expect(again.rerunOf).toEqual({ runId: oldId, fromStep: null });
    expect(((await getRun(dev.url, oldId)) as RunWithScript).reruns).toEqual([newId, again.id]);
  }, 300_000);

  it('from a failed activity: it is retried in a new run, with an activity id of its own, and the step before it is the old run\'s', async () => {
    const dir = tempDir();
    const count = join(dir, 'count');
    writeFiles(dir, {
      'probe.sh': `spool step before -- sh -c 'echo ran >> ${count}'\nspool activity run probe --requires shell -- sh -c 'test -f up || exit 5; echo probed'\nspool step after -- echo after\n`,
    });
    const oldId = await submit(dev.url, dir, 'probe.sh');
    await waitForRun(dev.url, oldId, ['failed']);
    const oldJournal = await journalOf(dev.url, oldId);
    writeFileSync(join(dir, 'up'), '');

    const rerun = await cli(dev.url, dir, ['rerun', oldId, '--from-step', 'probe']);
    expect(rerun.code, rerun.output).toBe(0);
    const newId = rerun.output.trim();
    await waitForRun(dev.url, newId, ['succeeded']);
    expect(readFileSync(count, 'utf8')).toBe('ran\n');
    const activityOf = (journal: JournalView[]) => journal.find((entry) => entry.verb === 'activity.run' && entry.kind === 'call')?.data.activityId;
    expect(activityOf(await journalOf(dev.url, newId))).toBe(`${newId}/probe`);
    expect(activityOf(oldJournal)).toBe(`${oldId}/probe`);
    expect(await journalOf(dev.url, oldId)).toEqual(oldJournal);
  });

  it('--latest runs the workflow file as it is now; without it, the script the old run was pinned to', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'wf.sh': 'spool output set v "$(spool step one -- echo old)"\n' });
    const oldId = await submit(dev.url, dir, 'wf.sh');
    await waitForRun(dev.url, oldId, ['succeeded']);
    writeFileSync(join(dir, 'wf.sh'), 'spool output set v "$(spool step one -- echo new)"\n');

    const pinned = await cli(dev.url, dir, ['rerun', oldId]);
    expect((await waitForRun(dev.url, pinned.output.trim(), ['succeeded'])).outputs.v).toBe('old');
    const latest = await cli(dev.url, dir, ['rerun', oldId, '--latest']);
    expect((await waitForRun(dev.url, latest.output.trim(), ['succeeded'])).outputs.v).toBe('new');
  }, 300_000);

  it('a run submitted --with DIR: its rerun checks out the same files (the bundle is copied with it)', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'bundled.sh': 'spool checkout out\nspool output set v "$(spool step one -- cat out/helper.txt)"\n', 'helper.txt': 'from the bundle\n' });
    const oldId = await submit(dev.url, dir, 'bundled.sh', '--with', '.');
    expect((await waitForRun(dev.url, oldId, ['succeeded'])).outputs.v).toBe('from the bundle');
    const rerun = await cli(dev.url, dir, ['rerun', oldId]);
    expect(rerun.code, rerun.output).toBe(0);
    expect((await waitForRun(dev.url, rerun.output.trim(), ['succeeded'])).outputs.v).toBe('from the bundle');
  }, 300_000);

  it('refuses an unknown step, a step that never ran, a step after a bare lock, a run that does not exist: one line, exit 2, no run made', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'wf.sh': script(join(dir, 'count')), 'locked.sh': 'spool lock deploys\nspool step a -- true\n' });
    const oldId = await submit(dev.url, dir, 'wf.sh');
    const lockedId = await submit(dev.url, dir, 'locked.sh');
    await waitForRun(dev.url, oldId, ['succeeded']);
    await waitForRun(dev.url, lockedId, ['succeeded']);
    const runs = (await listRuns(dev.url)).length;

    const cases: [string[], string][] = [
      [['rerun', oldId, '--from-step', 'nope'], `${oldId} has no step 'nope': it reached one, bytes, two, three`],
      [['rerun', oldId, '--from-step', 'four'], `step 'four' never ran in ${oldId}: it reached one, bytes, two, three`],
      [['rerun', 'dev:default:run-aaaaaaaaaaaaaaaa'], 'run dev:default:run-aaaaaaaaaaaaaaaa not found'],
      [['rerun', oldId, '--input', '{nope'], '--input is not valid JSON: {nope'],
      [['rerun', lockedId, '--from-step', 'a'], `${lockedId} took the lock 'deploys' (call 1) before step 'a', and a rerun from there would not hold it: rerun from an earlier step or from the top`],
    ];
    for (const [args, line] of cases) {
      const refused = await cli(dev.url, dir, args);
      expect(refused.output.trim(), args.join(' ')).toBe(`spool: ${line}`);
      expect(refused.code, args.join(' ')).toBe(2);
    }
    // Through the API: a 4xx with a code of its own.
    const answer = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(oldId)}/rerun`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fromStep: 'four' }),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('step_not_reached');
    expect((await listRuns(dev.url)).length).toBe(runs);
  }, 300_000);
});
