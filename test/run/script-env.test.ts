import { afterAll, describe, expect, it } from 'vitest';
import { recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * What a script's environment says about its job (docs/protocol.md, the seed's authoring model):
 * $SPOOL_ACTIVITY_ID is one constant for the whole job, on every pass, while each step's command
 * gets its own $SPOOL_IDEMPOTENCY_KEY.
 */
describe("a script's job identity", () => {
  it('given three charge steps in one job across two passes, then SPOOL_ACTIVITY_ID is one constant and each step has its own SPOOL_IDEMPOTENCY_KEY', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'job.sh': `set -e
echo "pass $SPOOL_PASS activity $SPOOL_ACTIVITY_ID"
for n in 1 2 3; do spool step "charge-$n" -- sh -c 'echo "key $SPOOL_IDEMPOTENCY_KEY activity $SPOOL_ACTIVITY_ID"'; done
spool sleep 1s
`,
    });
    const result = await spool(['run', 'job.sh', '--data-dir', `${dir}/data`], { cwd: dir });
    const runId = runIdOf(result.output);

    expect(result.code).toBe(0);
    expect((await recorded(`${dir}/data`, runId)).run?.passes).toBe(2);
    // Each pass prints its line; the steps print once (a replayed step's output is in the log already).
    const activities = [...result.output.matchAll(/activity (\S+)/g)].map((match) => match[1]);
    expect(activities).toEqual([runId, runId, runId, runId, runId]);
    expect(result.output).toMatch(/^pass 2 activity /m);
    const keys = [...result.output.matchAll(/^key (\S+)/gm)].map((match) => match[1]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
  });
});
