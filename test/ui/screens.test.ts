import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDev, submit, waitForRun } from '../support/dev.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/**
 * The pages on a desktop and on a 360 px phone, in the light and the dark scheme: nothing wider
 * than the screen, the timeline's Call and Result readable, and every button's target 24 px at
 * least (the ▸ buttons). Contrast (Approve and Reject in the dark scheme) is axe-core's, in
 * accessibility.test.ts on the same pages and screens.
 */

let dev: Dev;
let saga: string;
let gate: string;
beforeAll(async () => {
  dev = await startDev();
  const dir = tempDir();
  writeFiles(dir, {
    'saga.sh': readFileSync(new URL('../../examples/saga.sh', import.meta.url), 'utf8'),
    'refund.yaml': readFileSync(new URL('../pipeline/fixtures/refund.yaml', import.meta.url), 'utf8'),
  });
  saga = await submit(dev.url, dir, 'saga.sh');
  gate = await submit(dev.url, dir, 'refund.yaml');
  await waitForRun(dev.url, saga);
  await waitForChild(dev, gate, 'ask', ['waiting']);
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();


describe.each(SCREENS)('on a screen $name', (screen) => {
  it('the runs list fits the width', async () => {
    const page = await browser.page(screen);
    await page.goto(`${dev.url}/runs`);
    await page.locator('table.runs tbody tr').first().waitFor();
    await waitForText(page.locator('table.runs'), 'refund.yaml');
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  it('the saga’s run page fits the width, its timeline’s Call and Result are readable (the failed step’s stderr on its row), and its buttons are large enough', async () => {
    const page = await browser.page(screen);
    await page.goto(runPage(dev.url, saga));
    await waitForPhase(page, 'failed');
    const car = page.locator('.timeline tr[data-name="book-car"]');
    await waitForText(car, 'exit 1');
    // Issue 33, item 5: the failed step's stderr on its row, seen on this screen.
    expect(await car.locator('.stderr-tail').textContent()).toBe(' no cars left');
    expect(await car.locator('.stderr-tail').isVisible()).toBe(true);
    await page.locator('pre.log').waitFor();
    expect(await sidewaysOverflow(page)).toBe(0);
    for (const cell of ['td.call', 'td.result']) {
      const box = await car.locator(cell).boundingBox();
      // A name or an outcome's first words, not a sliver.
      expect(box?.width, cell).toBeGreaterThanOrEqual(120);
    }
    expect(await car.locator('td.call').evaluate((cell) => cell.scrollWidth <= cell.clientWidth)).toBe(true);
    expect(await smallButtons(page)).toEqual([]);
    // A call's details open within the width too.
    await car.getByRole('button', { name: /details of call/ }).click();
    await page.locator('.details-row pre').waitFor();
    expect(await sidewaysOverflow(page)).toBe(0);
    if (screen.width === 360 && screen.colorScheme === 'light') await screenshot(page, 'run-page-phone');
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  it('a waiting approval fits the width and its Approve and Reject are large enough', async () => {
    const page = await browser.page(screen);
    await page.goto(runPage(dev.url, gate));
    await page.locator('[data-gate="ask"] button.approve').waitFor();
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);
});
