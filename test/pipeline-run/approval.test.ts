import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, finalLog, getRun, startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';
import { childrenOf, jobOf, jobsThatRan, waitForChild, type Dev } from './pipeline-support.js';

/**
 * The "Approval with a timeout and escalation" recipe, run on spool dev: each row of its outcome
 * table runs exactly the jobs the table lists, and rejecting a gate cancels the run. It runs
 * examples/refund.yaml, the file users copy, whose 2d and 1d timeouts the run's input shortens so
 * a gate that nobody answers times out in seconds.
 */

const JOBS = ['ask', 'escalate', 'ask_lead', 'refund', 'give_up'];

const REFUND = readFileSync(new URL('../../examples/refund.yaml', import.meta.url), 'utf8');

/** Submits the recipe in a directory of its own, its gates timing out after these. */
async function submitRefund(askTimeout: string, leadTimeout: string): Promise<{ dir: string; runId: string }> {
  const dir = tempDir();
  writeFiles(dir, { 'refund.yaml': REFUND });
  const input = JSON.stringify({ ask_timeout: askTimeout, lead_timeout: leadTimeout });
  return { dir, runId: await submit(dev.url, dir, 'refund.yaml', '--input', input) };
}

let dev: Dev;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** Checks the run ran exactly `ran` (each with one succeeded child) and skipped every other job. */
async function expectOutcome(runId: string, ran: string[]): Promise<string> {
  const log = await finalLog(dev.url, runId, 90_000);
  expect((await getRun(dev.url, runId)).status, log).toBe('succeeded');
  expect(await jobsThatRan(dev, runId)).toEqual(ran);
  const children = await childrenOf(dev, runId);
  expect(children.map(jobOf).sort()).toEqual([...ran].sort());
  for (const child of children) expect(child.status).toBe('succeeded');
  for (const job of JOBS) {
    if (ran.includes(job)) expect(log).toMatch(new RegExp(`^ {2}${job}: succeeded$`, 'm'));
    else expect(log).toMatch(new RegExp(`^ {2}${job}: skipped, its condition is false$`, 'm'));
  }
  return log;
}

describe('approval with a timeout and escalation', () => {
  it('given ask approved with spool approve, then only ask and refund run', async () => {
    const { dir, runId } = await submitRefund('60s', '60s');

    const gate = await waitForChild(dev, runId, 'ask', ['waiting']);
    expect(gate.workflow).toBe('refund.yaml#ask');
    expect((await getRun(dev.url, runId)).awaiting).toBe('approval ask');
    expect(await cliOk(dev.url, dir, ['approve', runId, 'ask'])).toBe(`approved ask of ${runId}\n`);

    const log = await expectOutcome(runId, ['ask', 'refund']);
    expect(log).toContain('ask: approved\n');
    expect(log).toContain('refunded order 1042\n');
    expect(log).not.toContain('asking the team lead');
    expect((await dev.store.getRun(gate.id))?.outputs).toMatchObject({ approved: 'true', timed_out: 'false' });
  }, 120_000);

  it('given ask timed out and ask_lead approved, then ask, escalate, ask_lead and refund run', async () => {
    const { dir, runId } = await submitRefund('2s', '60s');

    await waitForChild(dev, runId, 'ask_lead', ['waiting'], 60_000);
    const ask = (await childrenOf(dev, runId)).find((child) => jobOf(child) === 'ask');
    expect(ask?.outputs).toMatchObject({ approved: 'false', timed_out: 'true' });
    await cliOk(dev.url, dir, ['approve', runId, 'ask_lead']);

    const log = await expectOutcome(runId, ['ask', 'escalate', 'ask_lead', 'refund']);
    expect(log).toContain('ask: no answer in time\n');
    expect(log).toContain('no answer on the refund for order 1042, asking the team lead\n');
    expect(log).toContain('ask_lead: approved\n');
    expect(log).toContain('refunded order 1042\n');
    expect(log).not.toContain('nobody answered');
  }, 120_000);

  it('given nobody answers either gate, then ask, escalate, ask_lead and give_up run', async () => {
    const { runId } = await submitRefund('2s', '2s');

    const log = await expectOutcome(runId, ['ask', 'escalate', 'ask_lead', 'give_up']);
    expect(log).toContain('ask: no answer in time\n');
    expect(log).toContain('ask_lead: no answer in time\n');
    expect(log).toContain('nobody answered, refund for order 1042 left open\n');
    expect(log).not.toContain('refunded order 1042');
  }, 120_000);

  it('given a timeout from the input that is no duration, then the gate fails in one line naming it and nothing after it runs', async () => {
    const { runId } = await submitRefund('two days', '60s');

    const run = await waitForRun(dev.url, runId, ['succeeded', 'failed', 'cancelled'], 60_000);
    const log = await finalLog(dev.url, runId);
    expect(run.status, log).toBe('failed');
    expect(log).toContain(
      "ask: failed ('timeout' of job 'ask' is 'two days' for this run (${{ input.ask_timeout || '2d' }}); it must be a duration longer than 0, like 30s, 5m, 2d)\n",
    );
    expect(await childrenOf(dev, runId)).toEqual([]);
  }, 120_000);

  it('given spool reject at ask, then the run and its gate end cancelled and nothing after the gate runs', async () => {
    const { dir, runId } = await submitRefund('60s', '60s');

    const gate = await waitForChild(dev, runId, 'ask', ['waiting']);
    expect(await cliOk(dev.url, dir, ['reject', runId, 'ask'])).toBe(`rejected ask of ${runId}\n`);

    const run = await waitForRun(dev.url, runId, ['succeeded', 'failed', 'cancelled'], 30_000);
    expect(run.status).toBe('cancelled');
    expect(run.error).toContain('rejected at ask');
    expect((await dev.store.getRun(gate.id))?.status).toBe('cancelled');
    // Nothing below the gate starts, however long we look.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await childrenOf(dev, runId)).map(jobOf)).toEqual(['ask']);
  }, 120_000);
});

describe('an approval gate under spool run', () => {
  it('given a gate, then spool run says spool dev takes the answer and exits 75; spool dev on the same store carries the run on once approved', async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, {
      'gate.yaml': 'name: gate\njobs:\n  ask:\n    approval:\n      prompt: "Refund?"\n      timeout: 1h\n  pay:\n    depends_on: [ask]\n    steps:\n      - name: pay\n        run: echo paid\n',
    });

    const { code, output } = await spool(['run', 'gate.yaml', '--data-dir', dataDir], { cwd: dir });

    const id = runIdOf(output);
    expect(output).toContain(
      `${id} waiting for approval at 'ask', which spool run cannot take: start spool dev here (it carries on this run), then spool approve ${id} ask (or spool reject)`,
    );
    expect(code).toBe(75);
    const later = await startDev(dataDir);
    try {
      await cliOk(later.url, dir, ['approve', id, 'ask']);
      expect((await waitForRun(later.url, id)).status).toBe('succeeded');
      expect(await finalLog(later.url, id)).toContain('paid');
    } finally {
      await later.close();
    }
  }, 120_000);
});

describe("a gate's first answer is final (issue 28, bug 5)", () => {
  it('given Approve and Reject sent at once, then exactly one wins, the other gets 409 naming who answered, the run does what the first said, and both answers are kept', async () => {
    const { dir, runId } = await submitRefund('60s', '60s');
    await waitForChild(dev, runId, 'ask', ['waiting']);
    const answer = (decision: string, via: string) =>
      fetch(`${dev.url}/v1/runs/${encodeURIComponent(runId)}/approvals/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision, via }),
      });

    const [approved, rejected] = await Promise.all([answer('approve', 'page'), answer('reject', 'cli')]);

    const statuses = [approved.status, rejected.status].sort();
    expect(statuses).toEqual([200, 409]);
    const [winner, loser] = approved.status === 200 ? ['approve', rejected] : ['reject', approved];
    const refusal = (await loser.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('already_answered');
    expect(refusal.error.message).toMatch(new RegExp(`^the approval 'ask' was already ${winner === 'approve' ? 'approved' : 'rejected'} by \\S+ \\((page|cli)\\) at \\S+; the first answer is final$`));
    if (winner === 'approve') await expectOutcome(runId, ['ask', 'refund']);
    else expect((await waitForRun(dev.url, runId)).status).toBe('cancelled');

    // A later answer from the CLI: one line, non-zero, and it is kept too.
    const late = await spool(['reject', runId, 'ask', '--server', dev.url], { cwd: dir });
    expect(late.code).not.toBe(0);
    expect(late.output).toMatch(/^spool: the approval 'ask' was already (approved|rejected) by .*; the first answer is final\n$/);
    const { approvals } = (await (await fetch(`${dev.url}/v1/runs/${encodeURIComponent(runId)}/approvals`)).json()) as {
      approvals: { job: string; answers: { decision: string; via: string; final: boolean }[] }[];
    };
    const answers = approvals.find((gate) => gate.job === 'ask')?.answers ?? [];
    expect(answers).toHaveLength(3);
    expect(answers.filter((each) => each.final)).toEqual([expect.objectContaining({ decision: winner })]);
    expect(answers.at(-1)).toMatchObject({ decision: 'reject', via: 'cli', final: false });
    const status = await cliOk(dev.url, dir, ['status', runId]);
    expect(status).toMatch(/^answers {9}ask: (approve|reject) by \S+ \((page|cli)\) at \S+$/m);
    expect(status).toMatch(/^ {16}ask: reject by \S+ \(cli\) at \S+ — refused: the first answer is final$/m);
  }, 120_000);
});
