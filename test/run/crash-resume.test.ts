import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  groupAlive,
  killScripts,
  readLines,
  recorded,
  removeTempDirs,
  runIdOf,
  spool,
  startSpool,
  tempDir,
  waitFor,
  writeFiles,
} from '../support/spool.js';

afterAll(removeTempDirs);

/** One data dir for the file; the runs in it go one at a time. */
const dataDir = join(tempDir(), 'data');

/** Step three is slow while slow.marker exists, so the test can kill everything in the middle of it. */
const SCRIPT = `spool step one -- sh -c 'echo one >> effects.txt'
spool step two -- sh -c 'echo two >> effects.txt'
spool step three -- sh -c 'echo "$SPOOL_IDEMPOTENCY_KEY" >> keys.txt; if [ -e slow.marker ]; then sleep 30; fi; echo three >> effects.txt'
spool step four -- sh -c 'echo four >> effects.txt'
`;

/** The activity is slow while slow.marker exists; it notes its pid, which `exec` keeps for the sleep. */
const ACTIVITY_SCRIPT = `rates="$(spool activity run fetch -- sh -c 'echo $$ >> attempts.txt; if [ -e slow.marker ]; then exec sleep 30; fi; echo rates-42')"
spool step after -- echo "got $rates"
`;

/** The child run's step is slow while slow.marker exists; it notes each start. */
const PARENT_SCRIPT = `spool step a -- sh -c 'echo a >> effects.txt'
printf '%s\\n' "spool step c -- sh -c 'echo started >> child-starts.txt; if [ -e slow.marker ]; then sleep 30; fi; echo c >> effects.txt'" > child.sh
spool call child.sh
spool step b -- sh -c 'echo b >> effects.txt'
`;

describe('a run whose runner dies mid-step', () => {
  it('given the runner and the script were SIGKILLed during step three, when resumed, then only step three runs again, with the same idempotency key', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'crash.sh': SCRIPT, 'slow.marker': '' });

    const runner = startSpool(['run', 'crash.sh', '--data-dir', dataDir], { cwd: dir });
    await waitFor('step three to start', () => readLines(join(dir, 'keys.txt')).length > 0);
    process.kill(runner.pid, 'SIGKILL');
    const groups = killScripts(dir);
    const killed = await runner.done;
    expect(killed.signal).toBe('SIGKILL');
    expect(groups).toHaveLength(1);
    await waitFor('the script process group to be gone', () => groups.every((group) => !groupAlive(group)));
    const id = runIdOf(killed.output);

    rmSync(join(dir, 'slow.marker')); // the same step, fast this time
    const resumed = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });

    expect(resumed.output).toContain(`  ${id} succeeded`);
    expect(resumed.code).toBe(0);
    expect(readLines(join(dir, 'effects.txt'))).toEqual(['one', 'two', 'three', 'four']);
    const keys = readLines(join(dir, 'keys.txt'));
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[0]).toMatch(/^spool-[0-9a-f]{32}$/);
    const { run, journal } = await recorded(dataDir, id);
    expect(run?.status).toBe('succeeded');
    expect(callsOf(journal)).toEqual(['step one', 'step two', 'step three', 'step four']);

    // Resuming it again, now that it has ended, says so at once and exits 2 (it used to wait forever).
    const again = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.output).toBe(`spool: run ${id} has ended (succeeded); there is nothing to resume\n`);
  }, 120_000);

  it('given the runner was SIGKILLed while an activity ran, when resumed, then the activity runs again and the run succeeds', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'activity.sh': ACTIVITY_SCRIPT, 'slow.marker': '' });

    const runner = startSpool(['run', 'activity.sh', '--data-dir', dataDir], { cwd: dir });
    const attempt = await waitFor('the activity to start', () => readLines(join(dir, 'attempts.txt'))[0]);
    process.kill(runner.pid, 'SIGKILL');
    process.kill(Number(attempt), 'SIGKILL'); // the activity (exec'd sleep) is the runner's child, in its group
    const killed = await runner.done;
    const id = runIdOf(killed.output);

    rmSync(join(dir, 'slow.marker'));
    const resumed = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });

    expect(resumed.output).toContain('got rates-42');
    expect(resumed.output).toContain(`  ${id} succeeded`);
    expect(resumed.code).toBe(0);
    expect(readLines(join(dir, 'attempts.txt'))).toHaveLength(2);
    const { journal } = await recorded(dataDir, id);
    expect(callsOf(journal)).toEqual(['activity.run fetch', 'step after']);
  }, 120_000);

  it('given the runner was SIGKILLed during a step of a child run (spool call), when resumed, then the child is carried on too and the run succeeds', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'parent.sh': PARENT_SCRIPT, 'slow.marker': '' });

    const runner = startSpool(['run', 'parent.sh', '--data-dir', dataDir], { cwd: dir });
    await waitFor("the child's step to start", () => readLines(join(dir, 'child-starts.txt')).length > 0);
    process.kill(runner.pid, 'SIGKILL');
    const groups = killScripts(dir);
    const killed = await runner.done;
    expect(groups.length).toBeGreaterThanOrEqual(1); // the child's script (the parent's pass ends at spool call)
    await waitFor('the script process groups to be gone', () => groups.every((group) => !groupAlive(group)));
    const id = runIdOf(killed.output);

    // The child's pass was under way: it was left running, which only the runner that died ran.
    rmSync(join(dir, 'slow.marker'));
    const resumed = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });

    expect(resumed.output).toContain(`  ${id} succeeded`);
    expect(resumed.code).toBe(0);
    expect(readLines(join(dir, 'effects.txt'))).toEqual(['a', 'c', 'b']);
    expect(readLines(join(dir, 'child-starts.txt'))).toHaveLength(2);
    const { journal } = await recorded(dataDir, id);
    expect(callsOf(journal)).toEqual(['step a', 'call', 'step b']);
  }, 120_000);

  it.each(['SIGTERM', 'SIGINT'] as const)('given the runner got %s during step three, then it says how to carry on, the run stays resumable, and resume finishes it without repeating steps', async (signal) => {
    const dir = tempDir();
    writeFiles(dir, { 'stop.sh': SCRIPT, 'slow.marker': '' });
    const runner = startSpool(['run', 'stop.sh', '--data-dir', dataDir], { cwd: dir });
    await waitFor('step three under way', () => readLines(join(dir, 'keys.txt')).length === 1);
    process.kill(runner.pid, signal);
    const stopped = await runner.done;
    const id = runIdOf(stopped.output);
    expect(stopped.code).toBe(signal === 'SIGTERM' ? 143 : 130); // 128 + the signal's number, as a shell reports it
    expect(stopped.output).toContain(`  ${id} interrupted; its journal is kept: carry on with 'spool resume ${id}'\n`);
    expect((await recorded(dataDir, id)).run?.status).toBe('running');

    rmSync(join(dir, 'slow.marker'));
    const resumed = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });
    expect(resumed.code, resumed.output).toBe(0);
    expect(readLines(join(dir, 'effects.txt'))).toEqual(['one', 'two', 'three', 'four']);
  }, 120_000);
});
