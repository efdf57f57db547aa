import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, startDev, submit, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, runPage, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/**
 * axe-core (test/support/axe.ts) on every page the web UI draws (src/ui/main.tsx's routes, and each
 * shape of a page: the runs list with and without child runs, found by text in a time range with its phase
 * chips, filtered to nothing, and its error box when the
 * API refuses the filter; a failed
 * script run with a call's details open; a rerun; a run waiting on a signal with an artifact and an
 * output, its Cancel confirmation and its signal form's error and confirmation; a pipeline at a gate
 * with a form and its Reject confirmation; a gate approved with values; a gate with approvers at 1 of
 * 2 and its Approve refused for one who answered; a pipeline's job; a run that
 * is not there; an address that is no page), at desktop size and at 360 px, in the light and the
 * dark scheme: no serious or critical violation anywhere. One server, one browser and one tab per
 * screen, so the 4 × 21 checks take seconds, not a server each.
 */

let dev: Dev;
const runs: Record<'saga' | 'waiting' | 'rerun' | 'gate' | 'job' | 'approved' | 'approvers', string> = {
  saga: '',
  waiting: '',
  rerun: '',
  gate: '',
  job: '',
  approved: '',
  approvers: '',
};

const FORM = `name: refund-form
jobs:
  ask:
    approval:
      prompt: "Refund order \${{ input.order }}?"
      timeout: 1h
      form:
        amount: { type: number, label: Amount (EUR), required: true, default: 480, min: 0, max: 10000 }
        reason: { type: string, label: Reason, required: true, options: [damaged, late, other] }
        note: { type: string, label: Note for the customer }
        notify: { type: boolean, label: Tell the customer }
  refund:
    depends_on: [ask]
    steps:
      - name: refund
        run: echo refunded
`;

const WAITING = `spool step fetch -- echo fetched
printf 'total: 42\\n' > report.txt
spool artifact put reports/report.txt report.txt
spool output set total 42
spool wait signal go --timeout 1h
`;

beforeAll(async () => {
  dev = await startDev();
  const dir = tempDir();
  writeFiles(dir, {
    'saga.sh': readFileSync(new URL('../../examples/saga.sh', import.meta.url), 'utf8'),
    'refund-form.yaml': FORM,
    'waiting.sh': WAITING,
    'hourly.sh': 'echo tick\n',
  });
  runs.saga = await submit(dev.url, dir, 'saga.sh');
  runs.waiting = await submit(dev.url, dir, 'waiting.sh');
  runs.gate = await submit(dev.url, dir, 'refund-form.yaml', '--input', '{"order": 1042}');
  await cliOk(dev.url, dir, ['handler', 'set', 'orders', './saga.sh', '--on', 'order.placed']);
  // An event the handler took: its page lists it with the run it started.
  await cliOk(dev.url, dir, ['event', 'emit', 'order.placed', '--key', 'order-7']);
  await cliOk(dev.url, dir, ['schedule', 'create', '--every', '1h', '--name', 'hourly-report', 'hourly.sh']);
  await waitForRun(dev.url, runs.saga);
  runs.rerun = (await cliOk(dev.url, dir, ['rerun', runs.saga, '--from-step', 'book-car'])).trim();
  await waitForRun(dev.url, runs.rerun);
  await waitForRun(dev.url, runs.waiting, ['waiting']);
  runs.job = (await waitForChild(dev, runs.gate, 'ask', ['waiting'])).id;
  // A gate answered with its form's values, which its page then lists.
  runs.approved = await submit(dev.url, dir, 'refund-form.yaml', '--input', '{"order": 1043}');
  await waitForChild(dev, runs.approved, 'ask', ['waiting']);
  const answer = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(runs.approved)}/approvals/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      decision: 'approve',
      via: 'page',
      values: { amount: 120, reason: 'late', note: 'sorry', notify: true },
    }),
  });
  expect(answer.status, await answer.text()).toBe(200);
  await waitForRun(dev.url, runs.approved, ['succeeded'], 60_000);
  // A gate with approvers at 1 of 2 (issue 33, item 11): made in the store, so it has no
  // submitter and the user running the tests approves it once, through the API.
  runs.approvers = `dev:default:run-${'b'.repeat(16)}`;
  const me = userInfo().username;
  const twoOf = `name: release\njobs:\n  ask:\n    approval:\n      prompt: Ship release 2.0?\n      approvers: {count: 2, from: [${JSON.stringify(me)}, bob, "group:release-managers"]}\n`;
  await dev.store.createRun({ id: runs.approvers, project: 'default', workflow: 'release.yaml', interpreter: 'pipeline', script: twoOf });
  await waitForChild(dev, runs.approvers, 'ask', ['waiting']);
  const first = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(runs.approvers)}/approvals/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approve', via: 'page' }),
  });
  expect(first.status, await first.text()).toBe(200);
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

/** Each page: its address and what shows it is drawn (the pages fetch their data after loading). */
const PAGES: { name: string; path: () => string; drawn: (page: Page) => Promise<unknown> }[] = [
  {
    name: 'the runs list',
    path: () => '/runs',
    drawn: (page) => waitForText(page.locator('table.runs'), 'refund-form.yaml'),
  },
  {
    name: 'the runs list with the runs other runs started',
    path: () => '/runs?all=1',
    drawn: (page) => waitForText(page.locator('table.runs'), 'refund-form.yaml#ask'),
  },
  {
    name: 'the runs list found by text, in a custom time range, longest first, one phase chosen by its chip',
    path: () => '/runs?q=saga&status=failed&range=custom&since=2000-01-01T00%3A00%3A00.000Z&sort=-duration',
    drawn: async (page) => {
      await waitForText(page.locator('table.runs'), 'saga.sh');
      await page.locator('.chips [aria-current="page"]').waitFor();
    },
  },
  {
    name: 'the runs list, filtered to nothing',
    path: () => '/runs?workflow=no-such-workflow',
    drawn: (page) => page.locator('.empty').waitFor(),
  },
  // The API refuses a phase it does not know (400): the page's error box, with what to do.
  {
    name: 'the runs list’s error',
    path: () => '/runs?status=bogus',
    drawn: (page) => waitForText(page.locator('main .error'), 'Could not load the runs'),
  },
  {
    name: 'the workflows',
    path: () => '/workflows',
    drawn: (page) => waitForText(page.locator('main table'), 'saga.sh'),
  },
  {
    name: 'the handlers',
    path: () => '/handlers',
    drawn: (page) => waitForText(page.locator('[data-handler="orders"] table.events'), 'order-7'),
  },
  {
    name: 'the schedules',
    path: () => '/schedules',
    drawn: (page) => waitForText(page.locator('main table'), 'hourly-report'),
  },
  {
    name: 'the schedules, one suspended and Trigger now having started a run',
    path: () => '/schedules',
    drawn: async (page) => {
      const row = page.locator('tr[data-schedule="hourly-report"]');
      await row.getByRole('button', { name: 'Trigger now: hourly-report' }).click();
      await waitForText(page.getByRole('status').first(), 'started run-');
      await row.getByRole('button', { name: 'Suspend hourly-report' }).click();
      await waitForText(row.locator('.next-tick'), 'Suspended since');
      await row.getByRole('button', { name: 'Resume hourly-report' }).click();
      await waitForText(row.locator('.next-tick'), 'in ');
    },
  },
  {
    name: 'the approvals waiting for the viewer',
    path: () => '/approvals',
    drawn: (page) => waitForText(page.locator('main'), 'Refund order 1042?'),
  },
  {
    name: 'a failed script run, a call’s details open',
    path: () => runPage('', runs.saga),
    drawn: async (page) => {
      await waitForPhase(page, 'failed');
      const car = page.locator('.timeline tr[data-name="book-car"]');
      await waitForText(car, 'exit 1');
      await page.locator('pre.log').waitFor();
      await car.getByRole('button', { name: /details of call/ }).click();
      await page.locator('.details-row pre').waitFor();
    },
  },
  {
    name: 'a rerun',
    path: () => runPage('', runs.rerun),
    drawn: (page) => waitForText(page.locator('.summary'), 'Rerun of'),
  },
  {
    name: 'a run waiting on a signal, with an artifact and an output',
    path: () => runPage('', runs.waiting),
    drawn: async (page) => {
      await waitForPhase(page, 'waiting');
      await waitForText(page.locator('table.artifacts'), 'reports/report.txt');
    },
  },
  {
    name: 'the run’s Cancel confirmation',
    path: () => runPage('', runs.waiting),
    drawn: async (page) => {
      await page.getByRole('button', { name: 'Cancel run…' }).click();
      await page.getByRole('button', { name: 'Yes, cancel it' }).waitFor();
    },
  },
  {
    name: 'the signal form refusing a payload that is not JSON',
    path: () => runPage('', runs.waiting),
    drawn: async (page) => {
      await page.locator('textarea[name="signal-payload"]').fill('not json');
      await page.getByRole('button', { name: 'Send signal' }).click();
      await page.locator('.signal-form + .form-error').waitFor();
    },
  },
  {
    name: 'the signal form having sent one (it queues: the run waits for another)',
    path: () => runPage('', runs.waiting),
    drawn: async (page) => {
      await page.locator('input[name="signal-name"]').fill('later');
      await page.getByRole('button', { name: 'Send signal' }).click();
      await page.locator('.signal-form + .form-ok').waitFor();
    },
  },
  {
    name: 'a pipeline at a gate with a form',
    path: () => runPage('', runs.gate),
    drawn: (page) => page.locator('[data-gate="ask"] select').waitFor(),
  },
  {
    name: 'the gate’s Reject confirmation',
    path: () => runPage('', runs.gate),
    drawn: async (page) => {
      await page.locator('[data-gate="ask"]').getByRole('button', { name: 'Reject…' }).click();
      await page.getByRole('button', { name: 'Yes, reject' }).waitFor();
    },
  },
  {
    name: 'a gate approved with its form’s values',
    path: () => runPage('', runs.approved),
    drawn: (page) => waitForText(page.locator('[data-gate="ask"]'), 'late'),
  },
  {
    name: 'a gate with approvers at 1 of 2',
    path: () => runPage('', runs.approvers),
    drawn: (page) => waitForText(page.locator('[data-gate="ask"] .gate-count'), '1 of 2 approvals'),
  },
  {
    name: 'its Approve refused for someone who already answered',
    path: () => runPage('', runs.approvers),
    drawn: async (page) => {
      await page.locator('[data-gate="ask"]').getByRole('button', { name: 'Approve' }).click();
      await waitForText(page.locator('[data-gate="ask"] [role="alert"]'), 'each person answers once');
    },
  },
  { name: 'a pipeline’s job', path: () => runPage('', runs.job), drawn: (page) => waitForPhase(page, 'waiting') },
  {
    name: 'a run that is not there',
    path: () => '/runs/dev:default:run-0000000000000000',
    drawn: (page) => waitForText(page.locator('main'), 'No such run'),
  },
  {
    name: 'an address that is no page',
    path: () => '/no-such-page',
    drawn: (page) => waitForText(page.locator('main'), 'No such page'),
  },
];


describe.each(SCREENS)('axe-core on a screen $name', (screen) => {
  it('finds no serious or critical violation on any page', async () => {
    const page = await browser.page(screen);
    const found: Record<string, string[]> = {};
    for (const { name, path, drawn } of PAGES) {
      await page.goto(`${dev.url}${path()}`);
      await drawn(page);
      const violations = await axeViolations(page);
      if (violations.length > 0) found[name] = violations;
    }
    expect(found).toEqual({});
    expect(errorsOf(page)).toEqual([]);
  }, 240_000);
});

/** The tables a page shows, each with a page it is on and a row that shows it is drawn. */
const TABLES: { table: string; path: () => string; row: string }[] = [
  { table: 'table.runs', path: () => '/runs', row: 'saga.sh' },
  { table: 'table.timeline', path: () => runPage('', runs.saga), row: 'no cars left' },
  { table: 'table.children', path: () => runPage('', runs.gate), row: 'ask' },
  { table: 'table.artifacts', path: () => runPage('', runs.waiting), row: 'reports/report.txt' },
  { table: 'table.schedules', path: () => '/schedules', row: 'hourly-report' },
  { table: 'table.events', path: () => '/handlers', row: 'order-7' },
];

// axe-core does not see this: a phone's layout (display: none on a header row) takes the column
// headers out of the accessibility tree, and a cell left out shifts the others under the wrong header.
describe.each([1280, 360])('the tables at %i px', (width) => {
  it('keep a column header for each cell a row shows, for a screen reader', async () => {
    const page = await browser.page({ width });
    for (const { table, path, row } of TABLES) {
      await page.goto(`${dev.url}${path()}`);
      await waitForText(page.locator(table), row);
      const headers = await page.locator(table).getByRole('columnheader').count();
      const cells = await page
        .locator(`${table} tbody tr`)
        .evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-name') ?? tr.textContent?.slice(0, 30)));
      const counts: Record<string, number> = {};
      for (const [i, name] of cells.entries())
        // A row's header (a schedule's name) is its first cell.
        for (const role of ['cell', 'rowheader'] as const) counts[`${name ?? ''} (${i})`] = (counts[`${name ?? ''} (${i})`] ?? 0) + (await page.locator(`${table} tbody tr`).nth(i).getByRole(role).count());
      expect(headers, table).toBeGreaterThan(2);
      expect(counts, `${table}: cells per row, beside ${headers} column headers`).toEqual(
        Object.fromEntries(Object.keys(counts).map((key) => [key, headers])),
      );
    }
  }, 120_000);
});

describe('the check itself', () => {
  it('given the gate’s Approve drawn as it was in the dark scheme (white on #5fd08a, 1.9:1) and a button without a name, then it names both rules and their elements', async () => {
    const page = await browser.page();
    await page.goto(runPage(dev.url, runs.gate));
    const approve = page.locator('[data-gate="ask"] button.approve');
    await approve.waitFor();
    // A constructed style sheet: the UI's Content-Security-Policy refuses style attributes, and the
    // page redraws the gate as it polls.
    await page.evaluate(() => {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync('button.approve { color: #fff !important; background: #5fd08a !important; }');
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    });
    await page
      .locator('main')
      .evaluate((main) => main.insertAdjacentHTML('beforeend', '<button type="button" class="nameless"></button>'));
    const found = (await axeViolations(page)).join('\n');
    expect(found).toMatch(/^color-contrast \(serious\): .*\n {2}at [^\n]*\.approve/m);
    expect(found).toMatch(/^button-name \(critical\): .*\n {2}at \.nameless/m);
  }, 60_000);
});
