import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { submit, useDevServer, waitForRun } from '../support/dev.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * The run page's log follows new lines while the run goes on, the first batch included (it comes
 * before the box is drawn), and holds still once the person scrolls up: at desktop size and on a
 * 360 px phone, in the light and the dark scheme, each screen a page on the same run at once.
 */

const dev = useDevServer();
const browser = useBrowser();

async function signal(id: string, name: string): Promise<void> {
  const response = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/signals`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBeLessThan(300);
}

describe('the live log', () => {
  it('given a run that prints 200 lines and waits, then on every screen the box shows its last line; more lines are followed until the person scrolls up', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'chatty.sh': `for i in $(seq 1 200); do echo "first $i"; done
spool wait signal more >/dev/null
for i in $(seq 1 200); do echo "second $i"; done
spool wait signal again >/dev/null
for i in $(seq 1 200); do echo "third $i"; done
spool wait signal end >/dev/null
`,
    });
    const id = await submit(dev.url, dir, 'chatty.sh');
    await waitForRun(dev.url, id, ['waiting']);

    const pages = await Promise.all(SCREENS.map((screen) => browser.page(screen)));
    /** Each screen's check, side by side; a failure names the screen. */
    const onEvery = (check: (log: Locator) => Promise<unknown>) =>
      Promise.all(pages.map((page, i) => check(page.locator('pre.log')).catch((error: Error) => Promise.reject(new Error(`${SCREENS[i]?.name ?? ''}: ${error.message}`)))));
    const atBottom = (log: Locator) => log.evaluate((box: HTMLElement) => box.scrollHeight - box.scrollTop - box.clientHeight < 2);
    await Promise.all(pages.map(async (page) => {
      await page.goto(runPage(dev.url, id));
      await waitForPhase(page, 'waiting');
    }));
    await onEvery(async (log) => {
      await waitForText(log, 'first 200');
      await expect.poll(() => atBottom(log)).toBe(true);
    });

    await signal(id, 'more');
    await onEvery(async (log) => {
      await waitForText(log, 'second 200');
      await expect.poll(() => atBottom(log)).toBe(true);
    });
    const phoneDark = pages[SCREENS.findIndex((screen) => screen.width === 360 && screen.colorScheme === 'dark')];
    if (phoneDark) await screenshot(phoneDark, 'run-log-follows-phone', phoneDark.locator('pre.log'));

    // Scrolled up to read: new lines no longer pull the box down.
    await onEvery((log) => log.evaluate((box: HTMLElement) => box.scrollTo(0, 0)));
    await signal(id, 'again');
    await onEvery(async (log) => {
      await waitForText(log, 'third 200');
      expect(await log.evaluate((box: HTMLElement) => box.scrollTop)).toBe(0);
    });
    for (const page of pages) expect(errorsOf(page)).toEqual([]);
  }, 90_000);
});
