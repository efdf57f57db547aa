import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  callsOf,
  groupAlive,
  killScripts,
  readLines,
  recorded,
  runIdOf,
  spool,
  startSpool,
  tempDir,
  waitFor,
  writeFiles,
} from '../support/spool.js';

/** Step three is slow while slow.marker exists, so the test can kill everything in the middle of it. */
const SCRIPT = `spool step one -- sh -c 'echo one >> effects.txt'
spool step two -- sh -c 'echo two >> effects.txt'
spool step three -- sh -c 'echo "$SPOOL_IDEMPOTENCY_KEY" >> keys.txt; if [ -e slow.marker ]; then sleep 30; fi; echo three >> effects.txt'
spool step four -- sh -c 'echo four >> effects.txt'
`;

describe('a run whose runner dies mid-step', () => {
  it('given the runner and the script were SIGKILLed during step three, when resumed, then only step three runs again, with the same idempotency key', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
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
  }, 90_000);
});
