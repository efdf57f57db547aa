import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, finalLog, getRun, listRuns, startDev } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { nsToMs, type Dev } from './pipeline-support.js';

/**
 * "A rate limit" from the recipes: a pipeline-level throttle. Runs over the rate wait as queued
 * for their GCRA slot and start evenly spaced, each key (tenant) has its own budget, burst lets a
 * few start together after a quiet spell, and policy: drop refuses runs over the rate.
 *
 * The runs that must arrive within one slot of each other are submitted together straight to the
 * API: a CLI process each took longer than the 1s between slots to start on a loaded machine.
 */

let dev: Dev;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

interface Submitted {
  id: string;
  status: string;
  createdAt: string;
  wakeAt: string | null;
  error: string | null;
  awaiting: string | null;
}

/**
 * The recipe's enrich with the throttle settings given and the CRM call stamped in ns as well
 * (`called the CRM for acme at 21:41:55 1796...`).
 */
function enrich(throttle: Record<string, string | number>): string {
  const recipe = readFileSync(new URL('../pipeline/fixtures/enrich.yaml', import.meta.url), 'utf8');
  const block = "throttle:\n  limit: 6\n  period: 1m\n  key: 'crm-${{ input.tenant }}'\n";
  expect(recipe).toContain(block);
  const settings = Object.entries(throttle)
    .map(([key, value]) => `  ${key}: ${value}\n`)
    .join('');
  return recipe.replace(block, `throttle:\n${settings}`).replace('at $(date +%T)', 'at $(date +%T) $(date +%s%N)');
}

async function submitJson(dir: string, file: string, tenant: string): Promise<Submitted> {
  const output = await cliOk(dev.url, dir, ['submit', file, '--input', JSON.stringify({ tenant }), '--json']);
  return (JSON.parse(output) as { run: Submitted }).run;
}

/**
 * A submit straight to the API, as `spool submit` makes it: runs that must arrive within one slot
 * of each other (a burst) cannot wait for a CLI process each to start on a loaded machine.
 */
async function submitByApi(dir: string, file: string, tenant: string): Promise<Submitted> {
  const body = { workflow: file, interpreter: 'pipeline', script: readFileSync(`${dir}/${file}`, 'utf8'), input: { tenant } };
  const response = await fetch(`${dev.url}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
  return ((await response.json()) as { run: Submitted }).run;
}

/** When the run's job called the CRM (ms), once the run has succeeded. */
async function calledAt(id: string, tenant: string): Promise<number> {
  const log = await finalLog(dev.url, id, 60_000);
  expect((await getRun(dev.url, id)).status, log).toBe('succeeded');
  const match = new RegExp(`^called the CRM for ${tenant} at \\d\\d:\\d\\d:\\d\\d (\\d+)$`, 'm').exec(log);
  if (!match?.[1]) throw new Error(`no 'called the CRM' line in the log of ${id}:\n${log}`);
  return nsToMs(match[1]);
}

/** The time a run may start: its slot if it was queued, else when it was admitted. */
const slotOf = (run: Submitted): number => Date.parse(run.wakeAt ?? run.createdAt);

describe('a rate limit', () => {
  it('given three acme runs and one globex run at 6 per 6s, then acme starts ~1s apart, each at its slot, and globex at once', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'enrich.yaml': enrich({ limit: 6, period: '6s', key: "'crm-${{ input.tenant }}'" }) });
    const submitted = await Promise.all([
      submitByApi(dir, 'enrich.yaml', 'acme'),
      submitByApi(dir, 'enrich.yaml', 'acme'),
      submitByApi(dir, 'enrich.yaml', 'acme'),
      submitByApi(dir, 'enrich.yaml', 'globex'),
    ]);
    const acme = submitted.slice(0, 3).sort((a, b) => slotOf(a) - slotOf(b));
    const globex = submitted[3];

    // Over the rate, a run is admitted as pending with a slot a whole interval after the one before.
    expect(acme.filter((run) => run.wakeAt !== null).length).toBeGreaterThanOrEqual(1);
    for (const run of acme.filter((r) => r.wakeAt !== null)) {
      expect(run.status).toBe('pending');
      expect(run.awaiting).toBe(`throttle crm-acme until ${run.wakeAt ?? ''}`);
    }
    // (An unqueued run's createdAt is stamped a little after the admission time its successor's
    // slot counts from, hence 900 rather than 1000.)
    const slots = acme.map(slotOf);
    for (let i = 1; i < slots.length; i++) expect((slots[i] ?? 0) - (slots[i - 1] ?? 0)).toBeGreaterThanOrEqual(900);
    // globex has a budget of its own.
    expect(globex.wakeAt).toBeNull();

    const acmeAt = await Promise.all(acme.map((run) => calledAt(run.id, 'acme')));
    const globexAt = await calledAt(globex.id, 'globex');
    // No run started before its slot (a few ms of clock rounding allowed), nor long after it.
    acme.forEach((run, i) => {
      expect(acmeAt[i] ?? 0).toBeGreaterThanOrEqual(slotOf(run) - 20);
      expect(acmeAt[i] ?? 0).toBeLessThan(slotOf(run) + 5000);
    });
    // The rate is carried by the slots (a second apart) and no start before its slot: how late a run
    // starts after its slot is the machine's load, so two starts may be closer than a second (139 ms
    // was seen on a loaded machine, the first run late and the second on time), never earlier.
    const [first = 0, , third = 0] = acmeAt;
    expect(third - first).toBeGreaterThanOrEqual(900);
    // globex started at once, not held back for a slot behind acme's.
    expect(globexAt).toBeGreaterThanOrEqual(Date.parse(globex.createdAt) - 20);
    expect(globexAt - Date.parse(globex.createdAt)).toBeLessThan(3000);
  }, 120_000);

  it('given burst 3, then after a quiet spell three start together and the fourth waits for the next slot', async () => {
    const dir = tempDir();
    // 3 per 6s: one slot every 2s once the burst is spent.
    writeFiles(dir, {
      'enrich.yaml': enrich({ limit: 3, period: '6s', key: "'burst-${{ input.tenant }}'", burst: 3 }),
    });
    const submitted = await Promise.all([1, 2, 3, 4].map(() => submitByApi(dir, 'enrich.yaml', 'acme')));

    const together = submitted.filter((run) => run.wakeAt === null);
    const waiting = submitted.filter((run) => run.wakeAt !== null);
    expect(together).toHaveLength(3);
    expect(waiting).toHaveLength(1);
    const fourth = waiting[0] as Submitted;
    expect(fourth.status).toBe('pending');
    const firstAdmitted = Math.min(...together.map((run) => Date.parse(run.createdAt)));
    expect(Date.parse(fourth.wakeAt ?? '')).toBeGreaterThanOrEqual(firstAdmitted + 2000 - 1000);

    const togetherAt = await Promise.all(together.map((run) => calledAt(run.id, 'acme')));
    const fourthAt = await calledAt(fourth.id, 'acme');
    // The three did not wait for one another (one at a time, the third would start 4s after the first)...
    expect(Math.max(...togetherAt) - Math.min(...togetherAt)).toBeLessThan(3000);
    // ...and the fourth started at its slot, not with them.
    expect(fourthAt).toBeGreaterThanOrEqual(Date.parse(fourth.wakeAt ?? '') - 20);
    expect(fourthAt).toBeGreaterThan(Math.max(...togetherAt));
  }, 120_000);

  it('given policy drop, then a submit over the rate is refused with one line and a non-zero exit, and makes no run; the first runs', async () => {
    const dir = tempDir();
    // The recipe's own rate, one every 10s, so the runs submitted together are well within it.
    writeFiles(dir, {
      'enrich.yaml': enrich({ limit: 6, period: '1m', key: "'drop-${{ input.tenant }}'", policy: 'drop' }),
    });
    const topLevel = async (): Promise<number> => (await listRuns(dev.url)).filter((run) => !run.parentId).length;
    const before = await topLevel();
    const results = await Promise.all([1, 2, 3].map(() => cli(dev.url, dir, ['submit', 'enrich.yaml', '--input', JSON.stringify({ tenant: 'acme' }), '--json'])));
    const globex = await submitJson(dir, 'enrich.yaml', 'globex');

    const admitted = results.filter((result) => result.code === 0);
    const refused = results.filter((result) => result.code !== 0);
    expect(admitted).toHaveLength(1);
    expect(refused).toHaveLength(2);
    for (const result of refused) {
      expect(result.code).toBe(1);
      expect(result.output).toBe('spool: refused: over the rate of 6 per 1m for drop-acme (policy drop)\n');
    }
    // Refused runs were never made: only the admitted acme run and globex's exist.
    expect(await topLevel()).toBe(before + 2);
    const first = (JSON.parse(admitted[0]?.output ?? '{}') as { run: Submitted }).run;
    // Nothing waits for a slot under drop: the admitted ones run at once.
    expect(first.wakeAt).toBeNull();
    expect(globex.status).not.toBe('cancelled');
    await calledAt(first.id, 'acme');
    await calledAt(globex.id, 'globex');
  }, 120_000);
});
