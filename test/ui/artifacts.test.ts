import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { submit, useDevServer, waitForRun } from '../support/dev.js';
import { errorsOf, runPage, useBrowser, waitForText } from '../support/browser.js';
import { tempDir, writeFiles } from '../support/spool.js';

/** The run page lists a run's artifacts, each a download (docs/artifacts.md). */

const dev = useDevServer();
const browser = useBrowser();

describe('artifacts on the run page', () => {
  it('given a run that put a report, then its page lists it with size and type, and its link downloads the same bytes', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'a.sh': `printf 'total: 42\\n' > report.txt\nspool artifact put reports/report.txt report.txt\n` });
    const id = await submit(dev.url, dir, 'a.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');

    const page = await browser.page();
    await page.goto(runPage(dev.url, id));
    const section = page.locator('table.artifacts');
    const text = await waitForText(section, 'reports/report.txt');
    expect(text).toContain('10 bytes');
    expect(text).toContain('text/plain');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'reports/report.txt' }).click()]);
    expect(download.suggestedFilename()).toBe('report.txt');
    expect(readFileSync((await download.path()) ?? '', 'utf8')).toBe('total: 42\n');
    expect(errorsOf(page)).toEqual([]);
  }, 90_000);
});
