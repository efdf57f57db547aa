import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlClient } from '../../src/store/sql.js';
import { startDev, submit, waitForRun } from '../support/dev.js';
import { errorsOf, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import type { Dev } from '../pipeline-run/pipeline-support.js';

/**
 * Finding runs on the runs list (docs/ui.md): a search box, a time range, an order and counts per
 * phase as links, all kept in the address, so a link reproduces the view; at desktop size and at
 * 360 px, in the light and the dark scheme.
 */

let dev: Dev;
let invoice: string;
let nightly: string;
let old: string;
beforeAll(async () => {
  dev = await startDev();
  const dir = tempDir();
  writeFiles(dir, {
    'invoice.sh': `spool step charge --label 'Charge ACME' -- sh -c 'echo no card >&2; exit 4'\n`,
    'nightly.sh': 'spool output set report done\n',
  });
  invoice = await submit(dev.url, dir, 'invoice.sh', '--input', '{"customer": "Globex"}');
  await waitForRun(dev.url, invoice);
  nightly = await submit(dev.url, dir, 'nightly.sh');
  await waitForRun(dev.url, nightly);
  old = await submit(dev.url, dir, 'nightly.sh');
  await waitForRun(dev.url, old);
  // A run from three days ago, which the last day leaves out: its creation time moved back in the store.
  const db = (dev.store as unknown as { db: SqlClient }).db;
  await db.query(`update runs set created_at = now() - interval '3 days', finished_at = now() - interval '3 days' + interval '2 seconds' where id = $1`, [old]);
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

const shown = (page: Page): Promise<string[]> => page.locator('table.runs tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run') ?? ''));
const chip = (page: Page, name: string) => page.getByRole('navigation', { name: 'Runs found, by status' }).getByRole('link', { name: new RegExp(`^${name} \\d+$`) });

describe('finding runs', () => {
  it('text, a phase chip, a time range and an order narrow the list, each kept in the address; the address alone draws the same view', async () => {
    const page = await browser.page();
    await page.goto(`${dev.url}/runs`);
    await waitForText(page.locator('table.runs'), 'invoice.sh');
    expect(await chip(page, 'all').textContent()).toBe('all 3');
    expect(await chip(page, 'failed').textContent()).toBe('failed 1');

    // Text in the input, found in any case.
    await page.getByLabel('Search').fill('GLOBEX');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL(`${dev.url}/runs?q=GLOBEX`);
    await expect.poll(() => shown(page)).toEqual([invoice]);
    expect(await chip(page, 'all').textContent()).toBe('all 1');

    // A step's label, then a chip that lists one phase of what the text finds.
    await page.getByLabel('Search').fill('charge acme');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(`${dev.url}/runs?q=charge+acme`);
    await chip(page, 'succeeded').click();
    await page.waitForURL(`${dev.url}/runs?q=charge+acme&status=succeeded`);
    await page.locator('.empty').waitFor();
    expect(await chip(page, 'succeeded').getAttribute('aria-current')).toBe('page');

    // The last day leaves out the run of three days ago; oldest first turns the rest around.
    await page.goto(`${dev.url}/runs`);
    await waitForText(page.locator('table.runs'), 'invoice.sh');
    await page.getByLabel('Created').selectOption('1d');
    await page.waitForURL(`${dev.url}/runs?range=1d`);
    await expect.poll(() => shown(page)).toEqual([nightly, invoice]);
    await page.getByLabel('Order').selectOption('created');
    await page.waitForURL(`${dev.url}/runs?range=1d&sort=created`);
    await expect.poll(() => shown(page)).toEqual([invoice, nightly]);
    expect(await page.locator('table.runs caption').textContent()).toBe('Runs, oldest first');

    // A custom range: its times in the address as UTC.
    await page.getByLabel('Created').selectOption('custom');
    await page.getByLabel('Until').fill('2000-01-01T00:00');
    await page.waitForURL(/range=custom&until=/);
    await page.locator('.empty').waitFor();
    // The field is in the viewer's zone, the address in UTC.
    expect(new URL(page.url()).searchParams.get('until')).toBe(await page.evaluate(() => new Date('2000-01-01T00:00').toISOString()));

    // The address alone: a fresh tab draws the same view, its fields filled in.
    const link = `${dev.url}/runs?q=nightly&range=custom&since=${encodeURIComponent(new Date(Date.now() - 2 * 86_400_000).toISOString())}&sort=-duration`;
    const other = await browser.page();
    await other.goto(link);
    await expect.poll(() => shown(other)).toEqual([nightly]);
    expect(await other.getByLabel('Search').inputValue()).toBe('nightly');
    expect(await other.getByLabel('Created').inputValue()).toBe('custom');
    expect(await other.getByLabel('Order').inputValue()).toBe('-duration');
    expect(await other.getByLabel('From').inputValue()).not.toBe('');
    expect(errorsOf(page)).toEqual([]);
    expect(errorsOf(other)).toEqual([]);
  }, 90_000);
});


describe.each(SCREENS)('on a screen $name', (screen) => {
  it('the runs list with a search, a custom range, an order and its phase chips fits the width', async () => {
    const page = await browser.page(screen);
    await page.goto(`${dev.url}/runs?q=sh&range=custom&since=2000-01-01T00%3A00%3A00.000Z&sort=-duration`);
    await waitForText(page.locator('table.runs'), 'invoice.sh');
    expect(await chip(page, 'all').textContent()).toBe('all 3');
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    if (screen.width === 1280 && screen.colorScheme === 'light') await screenshot(page, 'runs-find');
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);
});
