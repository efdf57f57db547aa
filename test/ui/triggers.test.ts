import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseOf } from '../../src/api/responses.js';
import { get, startDev, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs, tempDir } from '../support/spool.js';
import type { Dev } from '../pipeline-run/pipeline-support.js';

/**
 * The Schedules and Handlers pages act on what starts runs (issue 33, item 9), in Chromium against a
 * real `spool dev`, at 1280 and 360 px, light and dark: Trigger now shows the run it started,
 * linked, and the schedule's last runs gain it; Suspend leaves no next tick and Resume one from now;
 * a handler lists its events a page at a time, each with the run it started.
 */

let dev: Dev;
const dir = tempDir();

/** A request to the API, as the CLI would send it (the CLI's own verbs are tested in test/server/act-on-triggers.test.ts). */
async function send(method: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${dev.url}/v1${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.ok, await response.text()).toBe(true);
}

const script = (workflow: string, text: string) => ({ workflow, interpreter: 'bash -eu', script: text, cwd: dir });

beforeAll(async () => {
  dev = await startDev();
  // One schedule per screen, so each screen's test starts where the last left nothing behind.
  for (const { width, colorScheme } of SCREENS)
    await send('PUT', `/schedules/report-${width}-${colorScheme}`, { everyMs: 3_600_000, ...script('report.sh', 'spool step report -- echo report\n') });
  await send('PUT', '/schedules/nightly', { cron: '0 3 * * *', ...script('report.sh', 'spool step report -- echo report\n') });
  // An event before the handler existed started no run for it; the next eleven did.
  await send('POST', '/events', { type: 'order.placed', subject: 'order-0', id: 'order-0' });
  await send('PUT', '/handlers/take-order', { eventType: 'order.placed', ...script('take.sh', 'spool step take -- echo taken\n') });
  for (let n = 1; n <= 11; n++) await send('POST', '/events', { type: 'order.placed', subject: `order-${n}`, id: `order-${n}` });
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

const scheduleOf = async (name: string) => (await get<ResponseOf<'GET /schedules'>>(dev.url, '/schedules')).schedules.find((each) => each.name === name);

/** Nothing wider than the screen, every button large enough, no script error; and, once a test (it takes a while), no serious or critical axe finding. */
async function expectSound(page: Page, { axe }: { axe: boolean }): Promise<void> {
  expect(await sidewaysOverflow(page)).toBe(0);
  expect(await smallButtons(page)).toEqual([]);
  if (axe) expect(await axeViolations(page)).toEqual([]);
  expect(errorsOf(page)).toEqual([]);
}

describe.each(SCREENS)('the Schedules page on a screen $name', (screen) => {
  it('Trigger now shows the run it started, linked, among the last runs; Suspend leaves no next tick, Resume one from now (from the keyboard too)', async () => {
    const name = `report-${screen.width}-${screen.colorScheme}`;
    const page = await browser.page(screen);
    await page.goto(`${dev.url}/schedules`);
    const row = page.locator(`tr[data-schedule="${name}"]`);
    await waitForText(row, 'none yet');
    expect(await row.locator('.next-tick').textContent()).toMatch(/^in (59 min|1 h)/);

    await row.getByRole('button', { name: `Trigger now: ${name}` }).click();
    const status = page.getByRole('status').first();
    await waitForText(status, `${name} started run-`);
    const started = decodeURIComponent((await status.locator('a.run-id').getAttribute('href')) ?? '').slice('/runs/'.length);
    expect(started).toMatch(/^dev:default:run-[a-z0-9]{16}$/);
    expect((await waitForRun(dev.url, started)).status).toBe('succeeded');
    // The last runs list it, with its phase, as the page polls.
    const last = row.getByRole('list', { name: `Last runs of ${name}` });
    await waitForText(last, 'Succeeded');
    expect(decodeURIComponent((await last.locator('a.run-id').first().getAttribute('href')) ?? '')).toBe(`/runs/${started}`);

    // Suspend from the keyboard: the button says Resume and keeps the focus.
    await row.getByRole('button', { name: `Suspend ${name}` }).focus();
    await page.keyboard.press('Enter');
    await waitForText(row.locator('.next-tick'), 'Suspended since');
    await waitForText(status, `Suspended ${name}`);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Resume ${name}`);
    expect((await scheduleOf(name))?.nextAt).toBeNull();
    await expectSound(page, { axe: true });
    if (screen.width === 1280 && screen.colorScheme === 'light') await screenshot(page, 'schedules');

    const resumedAt = Date.now();
    await page.keyboard.press('Enter');
    await waitForText(row.locator('.next-tick'), 'in ');
    const resumed = await scheduleOf(name);
    expect(resumed?.suspendedAt).toBeNull();
    expect(Date.parse(resumed?.nextAt ?? '')).toBeGreaterThanOrEqual(resumedAt + 3_600_000 - 1000);
    expect(await row.getByRole('button', { name: `Suspend ${name}` }).count()).toBe(1);
    await expectSound(page, { axe: false });
  }, 60_000);
});

describe.each(SCREENS)('the Handlers page on a screen $name', (screen) => {
  it("lists a handler's events newest first, ten a page, each with the run it started, linked; Older shows the rest", async () => {
    const page = await browser.page(screen);
    await page.goto(`${dev.url}/handlers`);
    const events = page.locator('[data-handler="take-order"]');
    await waitForText(events.locator('h2'), 'order.placed');
    await waitForText(events.locator('tbody tr').first(), 'order-11');
    const rows = events.locator('tbody tr');
    expect(await rows.count()).toBe(10);
    const newest = rows.first();
    const runId = decodeURIComponent((await newest.locator('a.run-id').getAttribute('href')) ?? '').slice('/runs/'.length);
    const run = await waitForRun(dev.url, runId);
    expect(run).toMatchObject({ handler: 'take-order', subject: 'order-11' });
    await waitForText(newest, 'Succeeded');
    await expectSound(page, { axe: true });
    if (screen.width === 1280 && screen.colorScheme === 'light') await screenshot(page, 'handlers');

    await events.getByRole('button', { name: 'Older →' }).click();
    await waitForText(rows.first(), 'order-1');
    expect(await rows.count()).toBe(2);
    // The event from before the handler existed started no run.
    expect(await rows.nth(1).textContent()).toContain('none (the event came before this handler');
    expect(await events.getByRole('button', { name: 'Older →' }).count()).toBe(0);
    await events.getByRole('button', { name: '← Newer' }).click();
    await waitForText(rows.first(), 'order-11');
    await expectSound(page, { axe: false });
  }, 60_000);
});
