import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDev, submit } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { until, waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/**
 * A pipeline run's Shape on its run page (docs/ui.md, issue 33 item 10): its jobs by depth, each
 * with its state in a word and a mark besides its colour, a fan_out's items and a link to a job's
 * child run; at desktop size and at 360 px, in the light and the dark scheme.
 */

let dev: Dev;
let id: string;
beforeAll(async () => {
  dev = await startDev();
  const dir = tempDir();
  // Every state at once: build succeeded, an item of fan failed so after is skipped, ask waits for an answer and ship for ask.
  writeFiles(dir, {
    'release.yaml': [
      'name: release',
      'jobs:',
      '  build:',
      '    steps: [{ name: b, run: echo built }]',
      '  fan:',
      '    depends_on: [build]',
      '    fan_out:',
      '      items: [eu, us, ap]',
      '      steps: [{ name: each, run: \'test "${{ item }}" != us\' }]',
      '  after:',
      '    depends_on: [fan]',
      '    steps: [{ name: a, run: echo after }]',
      '  ask:',
      '    depends_on: [build]',
      '    approval: { prompt: "Ship?" }',
      '  ship:',
      '    depends_on: [ask]',
      '    steps: [{ name: s, run: echo shipped }]',
      '',
    ].join('\n'),
  });
  id = await submit(dev.url, dir, 'release.yaml');
  await waitForChild(dev, id, 'ask', ['waiting']);
  await until('the fan_out to end', async () => (await dev.store.listRuns({ parentId: id })).filter((child) => /#fan\[/.test(child.workflow) && child.finishedAt).length === 3);
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

const stateOf = (page: Page, job: string) => page.locator(`.shape li[data-vertex="${job}"] .vertex-state`).textContent();

async function openShape(page: Page): Promise<void> {
  await page.goto(runPage(dev.url, id));
  await waitForText(page.locator('#shape-title'), 'Shape (5 jobs)');
  await waitForText(page.locator('.shape li[data-vertex="after"]'), 'skipped');
}

describe("a pipeline run's shape", () => {
  it('shows each job with its state in words, the fan_out its items, jobs placed after what they depend on, and a ran job links to its child run', async () => {
    const page = await browser.page();
    await openShape(page);
    const states = Object.fromEntries(await Promise.all(['build', 'fan', 'after', 'ask', 'ship'].map(async (job): Promise<[string, string | undefined]> => [job, (await stateOf(page, job))?.trim()])));
    expect(states).toEqual({ build: '✓ succeeded', fan: '✕ failed', after: '↷ skipped', ask: '◐ running', ship: '○ waiting' });
    expect(await page.locator('.shape li[data-vertex="fan"] .vertex-items').textContent()).toBe('3 items: 2 done, 1 failed');
    // Columns by depth: build, then fan and ask, then after and ship.
    const left = (job: string) => page.locator(`.shape li[data-vertex="${job}"]`).evaluate((box) => box.getBoundingClientRect().left);
    const [build, fan, ask, after, ship] = await Promise.all(['build', 'fan', 'ask', 'after', 'ship'].map(left));
    expect(fan).toBe(ask);
    expect(after).toBe(ship);
    expect([build, fan, after]).toEqual([build, fan, after].sort((a = 0, b = 0) => a - b));
    expect(new Set([build, fan, after]).size).toBe(3);
    // Each dependency is an edge; a screen reader hears it as words.
    expect(await page.locator('.shape-edges path').count()).toBe(4);
    expect(await page.locator('.shape li[data-vertex="ship"] .visually-hidden').textContent()).toBe(', after ask');

    await page.locator('.shape li[data-vertex="build"] a').click();
    await waitForText(page.locator('.summary'), 'release.yaml#build');
    expect(errorsOf(page)).toEqual([]);
  }, 90_000);
});


describe.each(SCREENS)('on a screen $name', (screen) => {
  it('the shape scrolls inside its own box, not the page, and axe finds nothing serious', async () => {
    const page = await browser.page(screen);
    await openShape(page);
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    if (screen.colorScheme === 'light') await screenshot(page, screen.width === 1280 ? 'run-shape' : 'run-shape-phone', page.locator('section.shape'));
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);
});
