import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './spool.js';

/**
 * The web UI in a real browser: Debian's Chromium (`apt-get install chromium`, which .ci/run does)
 * driven by playwright-core, which downloads no browser of its own. One browser per test file,
 * a fresh page (and context: no shared cookies or cache) per test.
 */

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((path): path is string => Boolean(path));

export function chromiumPath(): string {
  const found = CANDIDATES.find((path) => existsSync(path));
  if (!found) throw new Error(`no Chromium at ${CANDIDATES.join(', ')}: install Debian's (apt-get install -y chromium) or set CHROMIUM_PATH`);
  return found;
}

const ERRORS = new WeakMap<Page, string[]>();

/** What the page's scripts threw (uncaught), which a test expects to be nothing. */
export const errorsOf = (page: Page): string[] => ERRORS.get(page) ?? [];

/** The screen a page is seen on: desktop (1280 px) in the light scheme unless a test says otherwise. */
export interface Screen {
  width?: number;
  colorScheme?: 'light' | 'dark';
}

/** Every screen issue 33 asks a page to work on: desktop and 360 px, each light and dark. */
export const SCREENS: readonly (Screen & { name: string })[] = [
  { name: 'desktop, light', width: 1280, colorScheme: 'light' },
  { name: 'desktop, dark', width: 1280, colorScheme: 'dark' },
  { name: '360 px, light', width: 360, colorScheme: 'light' },
  { name: '360 px, dark', width: 360, colorScheme: 'dark' },
];

export function useBrowser(): { page(screen?: Screen): Promise<Page> } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async page({ width = 1280, colorScheme = 'light' }: Screen = {}): Promise<Page> {
      if (!browser) throw new Error('the browser is not up yet: use it inside a test');
      const context = await browser.newContext({ viewport: { width, height: width < 800 ? 780 : 900 }, colorScheme, timezoneId: 'Europe/Amsterdam', locale: 'en-GB' });
      const page = await context.newPage();
      const errors: string[] = [];
      ERRORS.set(page, errors);
      page.on('pageerror', (error) => errors.push(error.message));
      page.setDefaultTimeout(30_000);
      return page;
    },
  };
}

/** The address of a run's page, as people share it. */
export const runPage = (url: string, id: string): string => `${url}/runs/${encodeURIComponent(id)}`;

/** Waits until the locator's text contains `text` (the pages poll the API, so it may take a moment). */
export async function waitForText(locator: Locator, text: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = (await locator.first().textContent({ timeout: Math.max(1, deadline - Date.now()) }).catch(() => null)) ?? '';
    if (last.includes(text)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(locator)} to contain ${JSON.stringify(text)}; it reads ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The phase the run page shows in its heading line. */
export async function waitForPhase(page: Page, phase: string, timeoutMs = 60_000): Promise<void> {
  await page.locator(`.page-head [data-phase="${phase}"]`).waitFor({ timeout: timeoutMs });
}

const DOCS_SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/**
 * A screenshot the README shows (of `part` only, if given). Tests take it every time; it replaces the one in docs/screenshots
 * only when UPDATE_SCREENSHOTS=1, so a test run leaves the work tree as it was.
 */
export async function screenshot(page: Page, name: string, part?: Locator): Promise<string> {
  const dir = process.env.UPDATE_SCREENSHOTS === '1' ? DOCS_SCREENSHOTS : tempDir('spool-screenshots-');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  // A part of the page (a section) when the docs show only it, else the whole page.
  await (part ? part.screenshot({ path }) : page.screenshot({ path, fullPage: true }));
  return path;
}
