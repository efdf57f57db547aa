import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { getRun, submit, useDevServer, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { tempDir, writeFiles } from '../support/spool.js';
import type { RunWithScript } from '../../src/api/responses.js';

/**
 * Bulk select on the runs list (docs/ui.md): a checkbox per row and one for the page, Cancel (asked
 * twice) and Rerun on the chosen runs, each run's outcome said on its own line; by keyboard, at 360 px.
 */

const dev = useDevServer();
const browser = useBrowser();

const short = (id: string): string => id.split(':').at(-1) ?? id;
const outcome = (page: Page, id: string) => page.locator(`.bulk-outcomes li[data-run="${id}"]`);

describe('bulk actions on the runs list', () => {
  it('given two waiting runs and one that ended, when the three are cancelled together, then the two are cancelled and the ended one says it was not; Rerun on the page then reruns all three', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'done.sh': 'spool output set x 1\n', 'waits.sh': 'spool wait signal go --timeout 1h\n' });
    const done = await submit(dev.url, dir, 'done.sh');
    await waitForRun(dev.url, done);
    const first = await submit(dev.url, dir, 'waits.sh');
    const second = await submit(dev.url, dir, 'waits.sh');
    await waitForRun(dev.url, first, ['waiting']);
    await waitForRun(dev.url, second, ['waiting']);

    const page = await browser.page({ width: 360, colorScheme: 'dark' });
    await page.goto(`${dev.url}/runs`);
    await waitForText(page.locator('.bulk-count'), 'None selected');
    // By keyboard: a row's checkbox takes the focus and Space ticks it.
    await page.getByRole('checkbox', { name: `Select run ${short(first)}` }).focus();
    await page.keyboard.press('Space');
    await page.getByRole('checkbox', { name: `Select run ${short(second)}` }).check();
    await page.getByRole('checkbox', { name: `Select run ${short(done)}` }).check();
    await waitForText(page.locator('.bulk-count'), '3 selected');

    // Cancel asks first; the question takes the focus, and Keep them changes nothing.
    await page.getByRole('button', { name: 'Cancel 3…' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Yes, cancel them');
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    await screenshot(page, 'ui-bulk-cancel', page.locator('.bulk'));
    await page.getByRole('button', { name: 'Keep them' }).click();
    expect((await getRun(dev.url, first)).status).toBe('waiting');
    await page.getByRole('button', { name: 'Cancel 3…' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Yes, cancel them');
    await page.keyboard.press('Enter');

    await waitForText(outcome(page, first), 'cancelled');
    expect(await outcome(page, second).textContent()).toBe(`${short(second)}: cancelled`);
    expect(await outcome(page, done).textContent()).toBe(
      `${short(done)}: not cancelled: it had already ended (succeeded)`,
    );
    expect((await getRun(dev.url, first)).status).toBe('cancelled');
    expect((await getRun(dev.url, second)).status).toBe('cancelled');
    expect((await getRun(dev.url, done)).status).toBe('succeeded');
    await waitForText(page.locator('.bulk-count'), 'None selected');
    expect(await axeViolations(page)).toEqual([]);

    // Select all on the page, then Rerun: each run gets a new one, named on its line.
    await page.getByRole('checkbox', { name: 'Select all 3 on this page' }).check();
    await waitForText(page.locator('.bulk-count'), '3 selected');
    await page.getByRole('button', { name: 'Rerun 3' }).click();
    await waitForText(outcome(page, done), 'rerun as');
    for (const id of [done, first, second]) {
      const rerun = await outcome(page, id).locator('a.run-id').nth(1).getAttribute('title');
      expect(rerun).toMatch(/^dev:default:run-/);
      expect(((await getRun(dev.url, rerun ?? '')) as RunWithScript).rerunOf).toEqual({ runId: id, fromStep: null });
    }
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  it('given a page with runs, the select-all box is half-ticked when some are chosen, and a row checkbox is named after its run', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'done.sh': 'spool output set x 1\n' });
    const ids = [await submit(dev.url, dir, 'done.sh'), await submit(dev.url, dir, 'done.sh')];
    await Promise.all(ids.map((id) => waitForRun(dev.url, id)));
    const page = await browser.page();
    await page.goto(`${dev.url}/runs`);
    await page.getByRole('checkbox', { name: `Select run ${short(ids[0] ?? '')}` }).check();
    const all = page.getByRole('checkbox', { name: /^Select all \d+ on this page$/ });
    expect(await all.evaluate((box) => (box as HTMLInputElement).indeterminate)).toBe(true);
    await all.check();
    expect(await all.evaluate((box) => (box as HTMLInputElement).indeterminate)).toBe(false);
    await all.uncheck();
    await waitForText(page.locator('.bulk-count'), 'None selected');
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);
});

describe('the bulk bar on every screen', () => {
  it('with runs chosen and Cancel asking, fits the width, its buttons are large enough, and axe finds nothing serious; Keep them changes nothing', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'waits.sh': 'spool wait signal go --timeout 1h\n' });
    const ids = [await submit(dev.url, dir, 'waits.sh'), await submit(dev.url, dir, 'waits.sh')];
    await Promise.all(ids.map((id) => waitForRun(dev.url, id, ['waiting'])));
    for (const screen of SCREENS) {
      const page = await browser.page(screen);
      await page.goto(`${dev.url}/runs`);
      for (const id of ids) await page.getByRole('checkbox', { name: `Select run ${short(id)}` }).check();
      await page.getByRole('button', { name: 'Cancel 2…' }).click();
      await page.getByRole('button', { name: 'Yes, cancel them' }).waitFor();
      expect(await sidewaysOverflow(page), screen.name).toBe(0);
      expect(await smallButtons(page), screen.name).toEqual([]);
      expect(await axeViolations(page), screen.name).toEqual([]);
      await page.getByRole('button', { name: 'Keep them' }).click();
      expect(errorsOf(page), screen.name).toEqual([]);
      await page.context().close();
    }
    for (const id of ids) expect((await getRun(dev.url, id)).status).toBe('waiting');
  }, 60_000);
});
