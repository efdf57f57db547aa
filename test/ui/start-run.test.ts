import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { getRun, submit, useDevServer, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * Start run on the Workflows page and on a workflow's own page (docs/ui.md): a typed form from a graph's declared inputs, one
 * JSON box for a workflow that declares none; what is wrong said on the form in one line; the new
 * run's page opens.
 */

const dev = useDevServer();
const browser = useBrowser();

const REFUND = `name: refund
input:
  order: { description: Order, type: string, required: true }
  amount: { description: Amount, type: number, min: 1, max: 500, default: 10 }
  region: { description: Region, options: [eu, us], default: eu }
  rush: { description: Rush, default: false }
nodes:
  - { id: a, type: script, config: { interpreter: bash, body: "echo hi" } }
outputs:
  order: { $expr: input.order }
  amount: { $expr: input.amount }
`;

const DEPLOY = `name: deploy
concurrency:
  group: deploy
  policy: \${{ input.policy || 'queue' }}
jobs:
  a:
    steps:
      - name: hi
        run: echo hi
`;

beforeAll(async () => {
  const dir = tempDir();
  writeFiles(dir, { 'refund.yaml': REFUND, 'deploy.yaml': DEPLOY, 'plain.sh': 'spool output set got "$(cat "$SPOOL_INPUT_FILE")"\n' });
  for (const file of ['refund.yaml', 'deploy.yaml', 'plain.sh']) await waitForRun(dev.url, await submit(dev.url, dir, file, '--input', '{"order": "first"}'));
}, 60_000);

async function openStart(page: Page, workflow: string): Promise<void> {
  await page.goto(`${dev.url}/workflows`);
  await page.getByRole('button', { name: `Start run… (${workflow})` }).click();
  await waitForText(page.locator('.start-run'), 'Start run');
}

const newRunId = async (page: Page): Promise<string> => {
  await page.waitForURL((url) => url.pathname.startsWith('/runs/'));
  return decodeURIComponent(new URL(page.url()).pathname).slice('/runs/'.length);
};

describe('start a run from the Workflows page', () => {
  it('given a graph with typed inputs, the form has a field for each, refuses a missing required one and one out of bounds in one line, and starts the run with typed values', async () => {
    const page = await browser.page({ width: 360, colorScheme: 'dark' });
    await openStart(page, 'refund.yaml');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('start-title');
    expect(await page.getByLabel('Amount').inputValue()).toBe('10');
    expect(await page.getByLabel('Region').inputValue()).toBe('eu');
    expect(await page.getByLabel('Rush').isChecked()).toBe(false);

    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    expect(await waitForText(page.locator('.start-run [role="alert"]'), 'Order')).toMatch(/^Order: \S/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('order');
    await page.getByLabel('Order').fill('A-17');
    await page.getByLabel('Amount').fill('9000');
    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    expect(await waitForText(page.locator('.start-run [role="alert"]'), 'Amount')).toMatch(/^Amount: .*500/);
    await page.getByLabel('Amount').fill('250');
    await page.getByLabel('Region').selectOption('us');
    await page.getByLabel('Rush').check();
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'ui-start-run', page.locator('.start-run'));

    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    const id = await newRunId(page);
    await waitForPhase(page, 'succeeded');
    const run = await getRun(dev.url, id);
    expect(run.workflow).toBe('refund.yaml');
    expect(run.input).toEqual({ order: 'A-17', amount: 250, region: 'us', rush: true });
    expect(run.outputs).toMatchObject({ order: 'A-17', amount: '250' });
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  it('given a workflow’s own page, Start run opens the same form there on every screen, and starts the run', async () => {
    for (const screen of SCREENS) {
      const page = await browser.page(screen);
      await page.goto(`${dev.url}/workflows/refund.yaml`);
      await waitForText(page.locator('main'), 'Runs over time');
      await page.getByRole('button', { name: 'Start run… (refund.yaml)' }).click();
      await waitForText(page.locator('.start-run'), 'Order');
      expect(await page.evaluate(() => document.activeElement?.id), screen.name).toBe('start-title');
      await page.getByLabel('Order').fill(`C-${screen.name}`);
      expect(await sidewaysOverflow(page), screen.name).toBe(0);
      expect(await smallButtons(page), screen.name).toEqual([]);
      expect(await axeViolations(page), screen.name).toEqual([]);
      if (screen === SCREENS[0]) {
        await page.getByRole('button', { name: 'Start run', exact: true }).click();
        const run = await waitForRun(dev.url, await newRunId(page));
        expect(run.input).toEqual({ order: `C-${screen.name}`, amount: 10, region: 'eu', rush: false });
      } else {
        await page.getByRole('button', { name: 'Close' }).click();
        expect(await page.locator('.start-run').count(), screen.name).toBe(0);
      }
      expect(errorsOf(page), screen.name).toEqual([]);
      await page.context().close();
    }
  }, 60_000);

  it('given a script that declares no inputs, the form is one JSON box: text that is not JSON is refused before sending, JSON starts the run', async () => {
    const page = await browser.page();
    await openStart(page, 'plain.sh');
    const box = page.getByLabel(/^Input \(JSON/);
    await box.fill('{"order": ');
    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    expect(await waitForText(page.locator('.start-run [role="alert"]'), 'not JSON')).toMatch(/^The input is not JSON: /);
    await box.fill('{"order": "B-2"}');
    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    const id = await newRunId(page);
    const run = await waitForRun(dev.url, id);
    expect(run.input).toEqual({ order: 'B-2' });
    expect(run.outputs.got).toMatch(/"order":\s*"B-2"/);
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);

  it('given a pipeline whose input picks its concurrency policy, an input the server refuses is said on the form in one line and starts nothing', async () => {
    const page = await browser.page();
    await openStart(page, 'deploy.yaml');
    const before = (await (await fetch(`${dev.url}/v1/runs?workflow=deploy.yaml`)).json()) as { runs: unknown[] };
    await page.getByLabel(/^Input \(JSON/).fill('{"policy": "sometimes"}');
    await page.getByRole('button', { name: 'Start run', exact: true }).click();
    expect(await waitForText(page.locator('.start-run [role="alert"]'), 'sometimes')).not.toContain('\n');
    const after = (await (await fetch(`${dev.url}/v1/runs?workflow=deploy.yaml`)).json()) as { runs: unknown[] };
    expect(after.runs.length).toBe(before.runs.length);
    expect(new URL(page.url()).pathname).toBe('/workflows');
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);
});
