import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { submit, useDevServer, waitForRun } from '../support/dev.js';
import { errorsOf, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * Keyboard focus: a filter's change keeps it in the field a person is using (the form is not
 * drawn anew), and an in-app navigation gives it to the new page's heading, never to <body>; at
 * desktop size and on a 360 px phone (where the filters and the nav wrap), light and dark.
 */

const dev = useDevServer();
const browser = useBrowser();

/** The focused element, as a person would name it: its tag and its label or text. */
const focused = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return 'BODY';
    const label = element.closest('label')?.firstChild?.textContent?.trim() ?? element.textContent?.trim() ?? '';
    return `${element.tagName} ${label}`;
  });

describe.each(SCREENS)('keyboard focus on a screen $name', (screen) => {
  it('stays in a filter field while the list reloads, goes to each new page’s heading on navigation and Back, and a filter the address drops empties its field', async () => {
    // This screen's own workflows: the server is the file's, shared by the screens.
    const [ok, bad] = ['ok', 'bad'].map((what) => `${what}-${screen.width}-${screen.colorScheme}.sh`) as [string, string];
    const dir = tempDir();
    writeFiles(dir, { [ok]: 'spool step hello -- echo hello\n', [bad]: 'spool step boom -- false\n' });
    await waitForRun(dev.url, await submit(dev.url, dir, ok));
    await waitForRun(dev.url, await submit(dev.url, dir, bad));

    const page = await browser.page(screen);
    await page.goto(`${dev.url}/runs`);
    await page.locator('table.runs tbody tr').nth(1).waitFor();

    // The phase, changed from the keyboard.
    const phase = page.getByLabel('Phase');
    await phase.focus();
    await phase.selectOption('failed');
    await page.waitForURL(`${dev.url}/runs?status=failed`);
    await waitForText(page.locator('table.runs tbody'), bad);
    expect((await page.locator('table.runs td.workflow').allTextContents()).every((name) => name.startsWith('bad-'))).toBe(true);
    expect(await focused(page)).toBe('SELECT Phase');

    // A workflow typed and sent with Enter: the field keeps the focus and what was typed.
    await page.getByLabel('Phase').selectOption('');
    const workflow = page.getByLabel('Workflow');
    await workflow.focus();
    await page.keyboard.type(ok);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${dev.url}/runs?workflow=${ok}`);
    await waitForText(page.locator('table.runs tbody'), ok);
    expect(await page.locator('table.runs td.workflow').allTextContents()).toEqual([ok]);
    expect(await focused(page)).toBe('INPUT Workflow');
    expect(await workflow.inputValue()).toBe(ok);

    // Into a run with the keyboard: its heading has the focus, and Tab goes on from there.
    await page.locator('table.runs a.run-id').first().focus();
    await page.keyboard.press('Enter');
    await waitForPhase(page, 'succeeded');
    await page.locator('.run-page[data-ready="true"]').waitFor();
    await expect.poll(() => focused(page)).toMatch(/^H1 Run run-/);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('BUTTON Rerun');

    // Back: the runs list's heading, and the field shows the address's filter again.
    await page.goBack();
    await page.waitForURL(`${dev.url}/runs?workflow=${ok}`);
    await waitForText(page.locator('h1'), 'Runs');
    await expect.poll(() => focused(page)).toBe('H1 Runs');
    expect(await workflow.inputValue()).toBe(ok);

    // The nav's Runs, the list without filters: the field empties.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL(`${dev.url}/runs`);
    await expect.poll(() => workflow.inputValue()).toBe('');
    await expect.poll(() => focused(page)).toBe('H1 Runs');
    expect(errorsOf(page)).toEqual([]);
  }, 90_000);
});
