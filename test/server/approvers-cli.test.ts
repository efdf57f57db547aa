import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, startDev, submit } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/**
 * `spool approve` at a gate with approvers (issue 33, item 11), on spool dev, where every request
 * is the user running it: the submitter of a run is refused in one line; a run a handler started
 * has no submitter, so that user's approval counts, once.
 */

const me = userInfo().username;
const DOCUMENT = `name: release
jobs:
  ask:
    approval:
      prompt: "Ship it?"
      approvers:
        count: 2
        from: [${JSON.stringify(me)}, bob]
  ship:
    depends_on: [ask]
    steps:
      - name: ship
        run: echo shipped
`;

const TWO_OF_THREE = `name: deploy
jobs:
  ask:
    approval:
      prompt: "Deploy?"
      approvers:
        count: 2
        from: [sam, alice, bob]
  deploy:
    depends_on: [ask]
    steps:
      - name: deploy
        run: echo "deployed after \${{ steps.ask.output.approvals[0].by }} and \${{ steps.ask.output.approvals[1].by }}"
`;

let dev: Dev;
let dir: string;
beforeAll(async () => {
  dev = await startDev();
  dir = tempDir();
  writeFiles(dir, { 'release.yaml': DOCUMENT, 'deploy.yaml': TWO_OF_THREE });
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

describe('spool approve at a gate with approvers', () => {
  it('given the run was submitted by this user, then approving says they submitted it, exits non-zero and records nothing', async () => {
    const id = await submit(dev.url, dir, 'release.yaml');
    await waitForChild(dev, id, 'ask', ['waiting']);
    const refused = await cli(dev.url, dir, ['approve', id, 'ask']);
    expect(refused.output).toBe(`spool: ${me} submitted run ${id} and may not approve its approval 'ask'; it asks 2 of ${me}, bob\n`);
    expect(refused.code).not.toBe(0);
    const gate = (await dev.store.listRuns({ parentId: id }))[0];
    expect(await dev.store.gateAnswers(gate?.id ?? '')).toEqual([]);
  }, 120_000);

  it('given a run a handler started, then the first approval says 1 of 2 and who, and a second from the same person is refused and not counted', async () => {
    await cliOk(dev.url, dir, ['handler', 'set', 'release', '--on', 'release.asked', 'release.yaml']);
    const emitted = JSON.parse(await cliOk(dev.url, dir, ['event', 'emit', 'release.asked', '--json'])) as { runs: string[] };
    const id = emitted.runs[0] ?? '';
    await waitForChild(dev, id, 'ask', ['waiting']);

    expect(await cliOk(dev.url, dir, ['approve', id, 'ask'])).toBe(`approved ask of ${id} (1 of 2 approvals: ${me}; waiting for 1 more)\n`);
    const again = await cli(dev.url, dir, ['approve', id, 'ask']);
    expect(again.output).toMatch(new RegExp(`^spool: ${me} already approved the approval 'ask' \\(cli\\) at \\S+; each person answers once \\(1 of 2 approvals\\)\\n$`));
    expect(again.code).not.toBe(0);
    const gate = (await dev.store.listRuns({ parentId: id }))[0];
    expect((await dev.store.gateAnswers(gate?.id ?? '')).map((each) => [each.by, each.via, each.final])).toEqual([[me, 'cli', false]]);
    expect(gate?.status).toBe('waiting');
    // spool status marks the approval counted, not refused as a late answer to a single-approver gate is.
    expect(await cliOk(dev.url, dir, ['status', id])).toMatch(new RegExp(`^answers {9}ask: approve by ${me} \\(cli\\) at \\S+ — counted$`, 'm'));
  }, 120_000);

  it('given --as on spool dev, then one person can be each of several: the submitter is refused, two others open the gate', async () => {
    const id = await submit(dev.url, dir, 'deploy.yaml', '--as', 'sam');
    await waitForChild(dev, id, 'ask', ['waiting']);
    const bySam = await cli(dev.url, dir, ['approve', id, 'ask', '--as', 'sam']);
    expect(bySam.output).toBe(`spool: sam submitted run ${id} and may not approve its approval 'ask'; it asks 2 of sam, alice, bob\n`);
    expect(bySam.code).not.toBe(0);
    expect(await cliOk(dev.url, dir, ['approve', id, 'ask', '--as', 'alice'])).toBe(`approved ask of ${id} (1 of 2 approvals: alice; waiting for 1 more)\n`);
    expect(await cliOk(dev.url, dir, ['approve', id, 'ask', '--as', 'bob'])).toBe(`approved ask of ${id} (2 of 2 approvals: alice, bob; the gate opens)\n`);
    const deploy = await waitForChild(dev, id, 'deploy', ['succeeded']);
    expect((await dev.store.readLogs(deploy.id)).map((line) => line.text).join('')).toContain('deployed after alice and bob');
  }, 120_000);
});
