import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, finalLog, getRun, startDev, submit, type RunView } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/** `spool submit` admission on `spool dev`: a rate limit per key, and idempotent submits. */

let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

describe('a rate limit on submit', () => {
  it('given three acme runs over 3/9s and one globex run submitted together, then acme starts ~3s apart and globex at once', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      // The time is taken when the pass starts, before the first spool call (each of which starts
      // a process), and recorded by the step.
      'enrich.sh': `started=$(date +%s%N)
spool step call -- echo "called the CRM at $started"
`,
    });
    const throttled = async (key: string): Promise<{ id: string; createdAt: string; wakeAt: string | null }> => {
      const output = await cliOk(dev.url, dir, [
        'submit',
        'enrich.sh',
        '--throttle',
        // One slot every 3s: wide enough that three CLI processes started together on a busy
        // machine arrive within one slot (at 1s apart, a late one could find its slot already due).
        '3/9s',
        '--throttle-key',
        key,
        '--json',
      ]);
      return (JSON.parse(output) as { run: { id: string; createdAt: string; wakeAt: string | null } }).run;
    };
    const submitted = await Promise.all([
      throttled('crm-acme'),
      throttled('crm-acme'),
      throttled('crm-acme'),
      throttled('crm-globex'),
    ]);
    const ids = submitted.map((run) => run.id);
    const acme = ids.slice(0, 3);
    const globex = ids[3] ?? '';

    // Over the rate, a run is admitted to wait as queued for its slot; the first of a key and
    // globex's (another key) are not held back.
    const slots = submitted
      .slice(0, 3)
      .map((run) => (run.wakeAt === null ? null : Date.parse(run.wakeAt) - Date.parse(run.createdAt)));
    expect(slots.filter((slot) => slot === null)).toHaveLength(1);
    expect(slots.filter((slot) => slot !== null && slot > 0)).toHaveLength(2);
    expect(submitted[3]?.wakeAt).toBeNull();
    const queuedSlots = submitted
      .slice(0, 3)
      .flatMap((run) => (run.wakeAt === null ? [] : [Date.parse(run.wakeAt)]))
      .sort((a, b) => a - b);
    expect((queuedSlots[1] ?? 0) - (queuedSlots[0] ?? 0)).toBe(3000);
    // 3 per 9s: one slot every 3s, the first 3s after the run that was not held back.
    const unheld = submitted.slice(0, 3).find((run) => run.wakeAt === null);
    expect((queuedSlots[0] ?? 0) - Date.parse(unheld?.createdAt ?? '')).toBeGreaterThanOrEqual(2900);

    const calledAt = async (id: string): Promise<number> => {
      const log = await finalLog(dev.url, id);
      expect((await getRun(dev.url, id)).status).toBe('succeeded');
      const match = /^called the CRM at (\d+)$/m.exec(log);
      if (!match?.[1]) throw new Error(`no 'called the CRM' line in the log of ${id}:\n${log}`);
      return Number(BigInt(match[1]) / 1_000_000n);
    };
    const startedAt: number[] = [];
    for (const id of acme) startedAt.push(await calledAt(id)); // one at a time: less polling of the server
    // None starts before its slot.
    submitted.slice(0, 3).forEach((run, i) => {
      if (run.wakeAt !== null) expect(startedAt[i]).toBeGreaterThanOrEqual(Date.parse(run.wakeAt));
    });
    const acmeAt = [...startedAt].sort((a, b) => a - b);
    const globexAt = await calledAt(globex);
    const [first = 0, second = 0, third = 0] = acmeAt;
    // The spacing is the slots' (above; no run starts before its slot): start times add only the
    // jitter of starting a process on a busy machine, so they are checked for order and bounds.
    expect(first).toBeLessThan(second);
    expect(second).toBeLessThan(third);
    expect(third - first).toBeLessThan(11_000);
    // globex has a budget of its own: it starts at once, before acme's second slot.
    expect(Math.abs(globexAt - first)).toBeLessThan(2500);
    expect(globexAt).toBeLessThan(second);
  }, 60_000);
});

describe('idempotent submit', () => {
  it('given the same --idempotency-key twice, then both submits print the same run id and only one run exists', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'x.sh': `spool step once -- echo "ran once"\n` });
    const first = await submit(dev.url, dir, 'x.sh', '--idempotency-key', 'k1');
    const second = await submit(dev.url, dir, 'x.sh', '--idempotency-key', 'k1');
    expect(second).toBe(first);
    const answer = JSON.parse(await cliOk(dev.url, dir, ['submit', 'x.sh', '--idempotency-key', 'k1', '--json'])) as {
      run: { id: string };
      created: boolean;
    };
    expect(answer).toMatchObject({ run: { id: first }, created: false });

    expect(await finalLog(dev.url, first)).toBe('ran once\n');
    const runs = JSON.parse(await cliOk(dev.url, dir, ['runs', '--json'])) as RunView[];
    expect(runs.filter((run) => run.idempotencyKey === 'k1').map((run) => run.id)).toEqual([first]);
    // A different key is a different run.
    const other = await submit(dev.url, dir, 'x.sh', '--idempotency-key', 'k2');
    expect(other).not.toBe(first);
  }, 60_000);

  it('given an empty idempotency key, then the CLI and the API refuse it in one line and record no run (issue 28, bug 8)', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'ok.sh': 'true\n' });
    const before = (JSON.parse(await cliOk(dev.url, dir, ['runs', '--json'])) as RunView[]).length;
    const refused = await cli(dev.url, dir, ['submit', 'ok.sh', '--idempotency-key', '']);
    expect(refused.code).toBe(2);
    expect(refused.output).toBe('spool: --idempotency-key takes a key of one or more characters\n');
    const response = await fetch(`${dev.url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'ok.sh', interpreter: 'bash -eu', script: 'true', idempotencyKey: '' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string; message: string } }).error.message).toMatch(/idempotencyKey/);
    expect((JSON.parse(await cliOk(dev.url, dir, ['runs', '--json'])) as RunView[]).length).toBe(before);
  }, 60_000);
});
