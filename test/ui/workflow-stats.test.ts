import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../support/axe.js';
import { errorsOf, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import type { ResponseOf } from '../../src/api/responses.js';
import { formatDuration } from '../../src/ui/format.js';
import { get, startDev, submit, waitForRun, type RunView } from '../support/dev.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * A workflow's page (docs/ui.md, issue 33 item 10): its runs by phase over a window, as bars and as
 * a table, and the percentiles of how long the finished ones took, from the store.
 */

let dev: Awaited<ReturnType<typeof startDev>>;
let runs: RunView[];
beforeAll(async () => {
  dev = await startDev();
  const dir = tempDir();
  // Two runs succeed, one fails (its input says so), one waits.
  writeFiles(dir, { 'checkout.sh': 'grep -q fail "$SPOOL_INPUT_FILE" && exit 1\nspool step charge -- echo charged\ngrep -q wait "$SPOOL_INPUT_FILE" && spool wait signal never\ntrue\n' });
  const ids = [
    await submit(dev.url, dir, 'checkout.sh'),
    await submit(dev.url, dir, 'checkout.sh', '--input', '{"x":1}'),
    await submit(dev.url, dir, 'checkout.sh', '--input', '{"fail":true}'),
    await submit(dev.url, dir, 'checkout.sh', '--input', '{"wait":true}'),
  ];
  runs = await Promise.all(ids.map((id, index) => waitForRun(dev.url, id, index === 3 ? ['waiting'] : undefined)));
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

async function openWorkflow(page: Page, query = ''): Promise<void> {
  await page.goto(`${dev.url}/workflows/checkout.sh${query}`);
  await waitForText(page.locator('.runs-over-time figcaption'), '4 runs created');
}

describe("a workflow's page", () => {
  it("charts the runs created over the last day by the phase each is in now, gives the finished runs' percentiles, and changes its window from the address", async () => {
    const page = await browser.page();
    await page.goto(`${dev.url}/workflows`);
    await page.getByRole('link', { name: 'checkout.sh' }).click();
    await waitForText(page.locator('.runs-over-time figcaption'), '4 runs created, by the phase each is in now; a bar for each hour');
    expect(page.url()).toBe(`${dev.url}/workflows/checkout.sh`);
    // The last hour's bar holds all four: a segment per phase, tallest the phase with most runs.
    const last = page.locator('.bar-slot').last();
    expect(await last.getAttribute('title')).toMatch(/: 1 waiting, 2 succeeded, 1 failed$/);
    expect(await last.locator('.segment').evaluateAll((segments): string[] => segments.map((segment) => (segment as HTMLElement).className))).toEqual([
      'segment phase-waiting',
      'segment phase-succeeded',
      'segment phase-failed',
    ]);
    // The same in words.
    await page.getByText('As a table').click();
    expect(await page.locator('.runs-over-time tbody tr').count()).toBe(1);
    expect(await page.locator('.runs-over-time tbody td').allTextContents()).toEqual(['0', '0', '1', '2', '1', '0']);
    // Slices start on the clock's hours.
    expect(await page.locator('.runs-over-time tbody th').textContent()).toMatch(/:00$/);
    // Three runs finished; the longest took as long as its run did.
    expect(await page.locator('.durations').textContent()).toMatch(/^Median \(p50\).+p90.+p99.+Longest.+$/);
    await expect(page.locator('main p.muted').last().textContent()).resolves.toContain('of the 3 runs that finished in this window');
    const longest = Math.max(...runs.filter((run) => run.finishedAt).map((run) => Date.parse(run.finishedAt!) - Date.parse(run.createdAt)));
    const { durations } = await get<ResponseOf<'GET /workflows/:name/stats'>>(dev.url, '/workflows/checkout.sh/stats');
    expect(Math.abs((durations?.maxMs ?? 0) - longest)).toBeLessThanOrEqual(1);
    expect(await page.locator('.durations div').last().locator('dd').textContent()).toBe(formatDuration(durations?.maxMs ?? 0));
    // The window is in the address: the last hour in minutes.
    await page.getByRole('button', { name: 'Last hour' }).click();
    await waitForText(page.locator('.runs-over-time figcaption'), 'a bar for each minute');
    expect(page.url()).toBe(`${dev.url}/workflows/checkout.sh?window=1h`);
    expect(await page.getByRole('button', { name: 'Last hour' }).getAttribute('aria-pressed')).toBe('true');
    // From the minute an hour ago: 60 minutes, and the one under way unless it began this very millisecond.
    expect([60, 61]).toContain(await page.locator('.bar-slot').count());
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  it('says so when no run of the window finished', async () => {
    const page = await browser.page();
    await page.goto(`${dev.url}/workflows/nothing-here.sh`);
    await waitForText(page.locator('.runs-over-time figcaption'), '0 runs created');
    await waitForText(page.locator('main'), 'No run finished in this window');
  }, 30_000);
});

describe.each(SCREENS)('on a screen $name', (screen) => {
  it('fits the screen and axe finds nothing serious', async () => {
    const page = await browser.page(screen);
    await openWorkflow(page, '?window=7d');
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    if (screen.name === 'desktop, light') await screenshot(page, 'workflow-stats', page.locator('main section'));
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);
});
