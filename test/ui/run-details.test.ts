import { describe, expect, it } from 'vitest';
import { getRun, poll, submit, useDevServer, waitForRun } from '../support/dev.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * What the run page tells apart: a timer's time in the viewer's zone (UTC in its title), a step
 * under way with how long it has run, spawn and call lines with the workflow they started, and
 * each child run by its workflow and short id; each at desktop size and on a 360 px phone, light
 * and dark.
 */

const dev = useDevServer();
const browser = useBrowser();

describe('the run page’s details', () => {
  it('given a run that spawned and called two workflows and then sleeps, then on every screen those lines name them, their links name each child, and the wake time is local with UTC in its title', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'parent.sh': `spool spawn audit.sh >/dev/null
spool call notify.sh >/dev/null
spool sleep 2h
`,
      'audit.sh': 'spool step audit -- echo audited\n',
      'notify.sh': 'spool step notify -- echo notified\n',
    });
    const id = await submit(dev.url, dir, 'parent.sh');
    // Past the call's wait for its child, at the sleep.
    const run = await poll('the sleep', async () => {
      const now = await getRun(dev.url, id);
      return now.awaiting?.startsWith('timer ') ? now : null;
    });
    expect(run.awaiting).toMatch(/^timer \d{4}-.*Z$/);
    const wake = run.awaiting?.slice('timer '.length) ?? '';

    for (const screen of SCREENS) {
      const page = await browser.page(screen);
      await page.goto(runPage(dev.url, id));
      await waitForPhase(page, 'waiting');
      const spawn = page.locator('.timeline tr[data-verb="spawn"]');
      const call = page.locator('.timeline tr[data-verb="call"]');
      await waitForText(spawn.locator('td.call'), 'audit.sh');
      expect(await call.locator('td.call').textContent()).toContain('notify.sh');
      // The children's links: each its workflow and short id.
      await waitForText(spawn.locator('td.result'), 'audit.sh · run-');
      await waitForText(call.locator('td.result'), 'notify.sh · run-');

      // The timer: in the page's zone (Europe/Amsterdam), not as the API's UTC text.
      const local = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'Europe/Amsterdam' }).format(new Date(wake));
      const time = page.locator('.summary .awaiting time').first();
      expect(await time.textContent()).toBe(local);
      expect(await time.getAttribute('title')).toBe(`${wake.slice(0, 19).replace('T', ' ')} UTC`);
      expect(await page.locator('.summary .awaiting').textContent()).not.toContain(wake);
      if (screen === SCREENS[0]) await screenshot(page, 'run-details');

      await page.goto(`${dev.url}/runs`);
      const row = page.locator(`table.runs tr[data-run="${id}"]`);
      await waitForText(row.locator('td.awaiting'), local);
      expect(await row.locator('td.awaiting').textContent()).toBe(`timer ${local}`);
      expect(errorsOf(page), screen.name).toEqual([]);
      await page.context().close();
    }
  }, 90_000);

  it('given a step under way, then on every screen its line shows how long it has run, and it grows', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'slow.sh': 'spool step slow -- sleep 60\n' });
    const id = await submit(dev.url, dir, 'slow.sh');
    await waitForRun(dev.url, id, ['running']);

    // 420 ms…, 3.5 s…, 12 s…: in milliseconds.
    const elapsed = (text: string) => {
      const [, count, unit] = /([\d.]+) (ms|s)…/.exec(text) ?? [];
      return Number(count ?? 'NaN') * (unit === 's' ? 1000 : 1);
    };
    // The screens side by side, on the one step under way.
    await Promise.all(
      SCREENS.map(async (screen) => {
        const page = await browser.page(screen);
        await page.goto(runPage(dev.url, id));
        const took = page.locator('.timeline tr[data-name="slow"] td.took');
        const first = await waitForText(took, '…');
        expect(elapsed(first), screen.name).toBeGreaterThanOrEqual(0);
        await expect.poll(async () => elapsed((await took.textContent()) ?? ''), { timeout: 20_000, message: screen.name }).toBeGreaterThan(elapsed(first));
        expect(errorsOf(page), screen.name).toEqual([]);
      }),
    );
    await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/cancel`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await waitForRun(dev.url, id, ['cancelled']);
    expect((await getRun(dev.url, id)).status).toBe('cancelled');
  }, 90_000);
});
