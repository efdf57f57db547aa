import type { Page } from 'playwright-core';

/**
 * Checks of a drawn page that axe-core (test/support/axe.ts, which checks contrast) does not make:
 * how far the page scrolls sideways, and each visible button's target size (WCAG 2.2: 24 by 24 px)
 * on every button, where axe's target-size lets a smaller one pass when it has space around it.
 */

/** Pixels the page is wider than the window: 0 when nothing makes it scroll sideways. */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/** One line per visible, enabled button smaller than 24 by 24 px; none when all are large enough. */
export function smallButtons(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    for (const button of Array.from(document.querySelectorAll('button'))) {
      const box = button.getBoundingClientRect();
      if (button.disabled || box.width === 0 || box.height === 0) continue;
      const name = (button.getAttribute('aria-label') ?? button.textContent ?? '').trim();
      if (box.width < 24 || box.height < 24) problems.push(`${name}: ${Math.round(box.width)}×${Math.round(box.height)} px`);
    }
    return problems;
  });
}
