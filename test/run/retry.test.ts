import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callsOf, readLines, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * The "Retry a flaky call" recipe with a command that notes when each attempt starts and when a
 * failed one ends, fails with 75 twice and answers on the third try.
 */
const FLAKY = `rates="$(spool activity run fetch --requires shell --attempts 5 --backoff 200ms --retry-on-exit 75 \\
  -- sh -c 'echo "start $(date +%s%N)" >> attempts.txt
            if [ "$(grep -c start attempts.txt)" -lt 3 ]; then echo "end $(date +%s%N)" >> attempts.txt; exit 75; fi
            echo rates-42')"
spool step store -- echo "stored $rates"
`;

const REFUSES_INPUT = `spool activity run check --requires shell --attempts 5 --backoff 200ms --retry-on-exit 75 \\
  -- sh -c 'echo "start $(date +%s%N)" >> attempts.txt; exit 64'
spool step after -- echo "not reached"
`;

const dataDir = join(tempDir(), 'data');

/** Milliseconds from each failed attempt's end to the next attempt's start: the waits the backoff sets. */
function waitsBetweenAttempts(lines: string[]): number[] {
  const at = lines.map((line) => Number(BigInt(line.split(' ')[1] ?? '0') / 1_000_000n));
  const waits: number[] = [];
  for (let i = 1; i + 1 < lines.length; i += 2) waits.push((at[i + 1] ?? 0) - (at[i] ?? 0));
  return waits;
}

describe('spool activity run with retries', () => {
  it('given a command that exits 75 twice then answers, then it runs three times with doubling waits and only the final result is recorded', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'flaky.sh': FLAKY });

    const { code, output } = await spool(['run', 'flaky.sh', '--data-dir', dataDir], { cwd: dir });

    expect(output).toContain('stored rates-42');
    expect(code).toBe(0);
    const lines = readLines(join(dir, 'attempts.txt'));
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['start', 'end', 'start', 'end', 'start']);
    // Never earlier than the backoff (200ms, then doubled to 400ms); the ceilings only allow for a busy host.
    const [first = 0, second = 0] = waitsBetweenAttempts(lines);
    expect(first).toBeGreaterThanOrEqual(200);
    expect(second).toBeGreaterThanOrEqual(400);
    expect(first).toBeLessThan(200 + 3000);
    expect(second).toBeLessThan(400 + 3000);

    const { journal } = await recorded(dataDir, runIdOf(output));
    expect(callsOf(journal)).toEqual(['activity.run fetch', 'step store']);
    const results = journal.filter((entry) => entry.verb === 'activity.run' && entry.kind === 'result');
    expect(results.map((entry) => entry.data)).toEqual([{ stdout: 'rates-42\n', exitCode: 0, attempts: 3 }]);
  }, 120_000);

  it('given a command that exits 64 with --retry-on-exit 75, then it runs once and the run fails', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'refuses.sh': REFUSES_INPUT });

    const { code, output } = await spool(['run', 'refuses.sh', '--data-dir', dataDir], { cwd: dir });

    expect(readLines(join(dir, 'attempts.txt'))).toHaveLength(1);
    expect(output).toContain('spool: activity check failed with exit 64 after 1 attempt');
    expect(output).not.toContain('not reached');
    expect(output).toMatch(/failed: script exited 64\n$/);
    expect(code).toBe(1);
    const { journal } = await recorded(dataDir, runIdOf(output));
    expect(callsOf(journal)).toEqual(['activity.run check']);
    expect(journal.find((entry) => entry.kind === 'result')?.data).toMatchObject({ exitCode: 64, attempts: 1 });
  }, 120_000);
});
