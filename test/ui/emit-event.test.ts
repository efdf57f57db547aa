import { describe, expect, it } from 'vitest';
import { cliOk, getRun, useDevServer, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { tempDir, writeFiles } from '../support/spool.js';

/** Emitting an event from the runs list (docs/ui.md): through POST /v1/events, naming the runs its handlers started. */

const dev = useDevServer();
const browser = useBrowser();

describe('emit an event from the runs list', () => {
  it('given a handler for order.paid, when an event is emitted with a subject and a payload, then the page names the run it started, which has both; a payload that is not JSON is refused on the form and sends nothing', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'paid.sh': 'spool output set got "$(cat "$SPOOL_INPUT_FILE")"\n' });
    await cliOk(dev.url, dir, ['handler', 'set', 'on-paid', './paid.sh', '--on', 'order.paid']);

    const page = await browser.page({ width: 360 });
    await page.goto(`${dev.url}/runs`);
    await page.getByText('Emit an event').click();
    await page.getByLabel('Type').fill('order.paid');
    await page.getByLabel('Subject (optional)').fill('order-17');
    await page.getByLabel('Payload (JSON)').fill('{"order": 17');
    await page.getByRole('button', { name: 'Emit' }).click();
    expect(await waitForText(page.locator('.emit-event .form-error'), 'The payload is not JSON')).toMatch(/^The payload is not JSON: /);

    await page.getByLabel('Payload (JSON)').fill('{"order": 17}');
    await page.getByRole('button', { name: 'Emit' }).click();
    await waitForText(page.locator('.event-answer'), 'It started');
    const started = await page.locator('.event-answer a.run-id').getAttribute('title');
    const run = await waitForRun(dev.url, started ?? '');
    expect(run.subject).toBe('order-17');
    expect(run.outputs.got).toMatch(/"order":\s*17/);
    expect((await getRun(dev.url, started ?? '')).workflow).toBe('./paid.sh');

    // A type no handler takes starts nothing, and the page says so.
    await page.getByLabel('Type').fill('nobody.listens');
    await page.getByRole('button', { name: 'Emit' }).click();
    await waitForText(page.locator('.event-answer'), 'started no run');
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);
});

describe.each(SCREENS)('the Emit an event form on a screen $name', (screen) => {
  it('fits the width with its answer and its refusal, its buttons are large enough, and axe finds nothing serious', async () => {
    const page = await browser.page(screen);
    await page.goto(`${dev.url}/runs`);
    await page.getByText('Emit an event').click();
    await page.getByLabel('Type').fill('nobody.listens');
    await page.getByLabel('Subject (optional)').fill('order-18');
    await page.getByLabel('Payload (JSON)').fill('{"order": 18}');
    await page.getByRole('button', { name: 'Emit' }).click();
    await waitForText(page.locator('.event-answer'), 'started no run');
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    if (screen.width === 360 && screen.colorScheme === 'dark') await screenshot(page, 'ui-emit-event', page.locator('.emit-event'));
    await page.getByLabel('Payload (JSON)').fill('{"order": ');
    await page.getByRole('button', { name: 'Emit' }).click();
    await waitForText(page.locator('.emit-event .form-error'), 'The payload is not JSON');
    expect(await axeViolations(page)).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);
});
