import type { Page } from 'playwright-core';

/**
 * Checks of a drawn page that axe-core makes too, done in the page itself (no axe-core in this
 * repository's dependencies): how far the page scrolls sideways, and each visible button's text
 * contrast (WCAG AA: 4.5:1) and target size (WCAG 2.2: 24 by 24 px).
 */

/** Pixels the page is wider than the window: 0 when nothing makes it scroll sideways. */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/** One line per visible, enabled button that fails contrast or target size; none when all pass. */
export function buttonProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    // rgb(…) / rgba(…) and Chromium's color(srgb …) for color-mix(); [r, g, b, alpha] in 0–255.
    const parse = (text: string): number[] => {
      const srgb = /color\(srgb ([\d.]+) ([\d.]+) ([\d.]+)(?: \/ ([\d.]+))?\)/.exec(text);
      if (srgb) return [Number(srgb[1]) * 255, Number(srgb[2]) * 255, Number(srgb[3]) * 255, srgb[4] === undefined ? 1 : Number(srgb[4])];
      const parts = (/rgba?\(([^)]*)\)/.exec(text)?.[1] ?? '0, 0, 0, 0').split(/[\s,/]+/).filter(Boolean).map(Number);
      return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0, parts[3] ?? 1];
    };
    const luminance = ([r = 0, g = 0, b = 0]: number[]): number => {
      const channel = (value: number) => {
        const c = value / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    // What is behind an element: its own background or the nearest ancestor's that is opaque.
    const background = (element: Element): number[] => {
      for (let at: Element | null = element; at; at = at.parentElement) {
        const color = parse(getComputedStyle(at).backgroundColor);
        if ((color[3] ?? 0) >= 1) return color;
      }
      return parse(getComputedStyle(document.documentElement).backgroundColor);
    };
    const problems: string[] = [];
    for (const button of Array.from(document.querySelectorAll('button'))) {
      const box = button.getBoundingClientRect();
      if (button.disabled || box.width === 0 || box.height === 0) continue;
      const name = (button.getAttribute('aria-label') ?? button.textContent ?? '').trim();
      const [fg, bg] = [luminance(parse(getComputedStyle(button).color)), luminance(background(button))];
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < 4.5) problems.push(`${name}: contrast ${ratio.toFixed(2)}:1`);
      if (box.width < 24 || box.height < 24) problems.push(`${name}: ${Math.round(box.width)}×${Math.round(box.height)} px`);
    }
    return problems;
  });
}
