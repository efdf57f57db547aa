import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  isAlive,
  readLines,
  recorded,
  removeTempDirs,
  runIdOf,
  scriptProcesses,
  startSpool,
  tempDir,
  waitFor,
  writeFiles,
} from '../support/spool.js';

afterAll(removeTempDirs);

const SCRIPT = `echo $$ >> pids.txt
spool step one -- sh -c 'echo one >> effects.txt'
spool sleep 2s
spool step two -- sh -c 'echo two >> effects.txt'
`;

describe('spool sleep', () => {
  it('given a run reaches a 2s sleep, then no process of its script is left while it sleeps, and a second pass finishes it', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    writeFiles(dir, { 'nap.sh': SCRIPT });

    const runner = startSpool(['run', 'nap.sh', '--data-dir', dataDir], { cwd: dir });
    await waitFor('step one to run', () => readLines(join(dir, 'effects.txt')).includes('one'));
    const firstPass = Number(readLines(join(dir, 'pids.txt'))[0]);
    // The pass ends as soon as the sleep is recorded, well inside the 2s before the next one starts.
    await waitFor('the first pass to end', () => !isAlive(firstPass), 10_000);
    expect(scriptProcesses(dir)).toEqual([]);
    expect(readLines(join(dir, 'pids.txt'))).toHaveLength(1); // still asleep: no second pass yet
    const { code, output } = await runner.done;

    const id = runIdOf(output);
    expect(output).toContain(`  ${id} succeeded`);
    expect(code).toBe(0);
    expect(readLines(join(dir, 'effects.txt'))).toEqual(['one', 'two']);
    const pids = readLines(join(dir, 'pids.txt'));
    expect(pids).toHaveLength(2);
    expect(pids[1]).not.toBe(pids[0]);
    const { run, journal } = await recorded(dataDir, id);
    expect(run?.passes).toBe(2);
    expect(callsOf(journal)).toEqual(['step one', 'sleep', 'step two']);
    expect(journal.filter((entry) => entry.kind === 'result').map((entry) => entry.position)).toEqual([0, 1, 2]);
  }, 120_000);
});
