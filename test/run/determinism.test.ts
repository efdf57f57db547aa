import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  recorded,
  removeTempDirs,
  runIdOf,
  startSpool,
  tempDir,
  waitFor,
  writeFiles,
} from '../support/spool.js';

afterAll(removeTempDirs);

/** Which step the script reaches second comes from a helper it sources, which the test edits mid-run. */
const SCRIPT = `source ./names.sh
spool step a -- echo A
spool step "$second" -- sh -c 'echo B; touch reached-second'
spool sleep 2s
spool step end -- echo end
`;

/** One data dir for the file; the runs in it go one at a time. */
const dataDir = join(tempDir(), 'data');

/** First pass records `step a`, `step b` and the sleep; during the sleep the helper changes b to c. */
async function runWithHelperEditedDuringSleep(extra: string[]) {
  const dir = tempDir();
  writeFiles(dir, { 'divergent.sh': SCRIPT, 'names.sh': 'second=b\n' });
  const runner = startSpool(['run', 'divergent.sh', '--data-dir', dataDir, ...extra], { cwd: dir });
  await waitFor('step b to run', () => existsSync(join(dir, 'reached-second')));
  writeFiles(dir, { 'names.sh': 'second=c\n' });
  const result = await runner.done;
  return { ...result, id: runIdOf(result.output) };
}

describe('replay that reaches a different call', () => {
  it('given the second pass reaches step c where step b was recorded, then the run fails with a determinism error naming both', async () => {
    const { code, output, id } = await runWithHelperEditedDuringSleep([]);

    expect(output).toContain('determinism error at call 2');
    expect(output).toContain('the journal recorded `step b` there');
    expect(output).toContain('this pass reached `step c`');
    expect(output).toContain(`  ${id} failed:`);
    expect(output).not.toContain('end\n');
    expect(code).toBe(1);
    const { run, journal } = await recorded(dataDir, id);
    expect(run?.status).toBe('failed');
    expect(callsOf(journal)).toEqual(['step a', 'step b', 'sleep']);
  }, 120_000);

  it('given --lenient, when the second pass reaches step c where step b was recorded, then the run goes on and succeeds', async () => {
    const { code, output, id } = await runWithHelperEditedDuringSleep(['--lenient']);

    expect(output).not.toContain('determinism error');
    expect(output).toContain(`  ${id} succeeded`);
    expect(code).toBe(0);
    const { journal } = await recorded(dataDir, id);
    expect(callsOf(journal)).toEqual(['step a', 'step b', 'sleep', 'step end']);
  }, 120_000);

  it('given the second pass calls b.sh where the journal recorded a call of a.sh, then the run fails with a determinism error naming both, and b.sh never runs', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'caller.sh': 'source ./names.sh\nspool call "$child"\ntouch called\nspool sleep 2s\necho end\n',
      'names.sh': 'child=a.sh\n',
      'a.sh': 'echo in-a\n',
      'b.sh': 'touch b-ran\n',
    });
    const runner = startSpool(['run', 'caller.sh', '--data-dir', dataDir], { cwd: dir });
    await waitFor('the call of a.sh to return', () => existsSync(join(dir, 'called')));
    writeFiles(dir, { 'names.sh': 'child=b.sh\n' });
    const { code, output } = await runner.done;
    expect(output).toContain('determinism error at call 1: the journal recorded `call a.sh` there, but this pass reached `call b.sh`');
    expect(output).not.toContain('end\n');
    expect(code).toBe(1);
    expect(existsSync(join(dir, 'b-ran'))).toBe(false);
  }, 120_000);
});
