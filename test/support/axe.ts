import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core (a dev dependency, never in the bundle) run in a drawn page: its WCAG 2.0/2.1 A and AA
 * rules and its best practices. A test expects no serious or critical violation; each one found is
 * a readable line (rule, impact, what is wrong, the failing elements' selectors and axe's summary
 * of the first) so the failure says what to fix.
 */

const AXE_SCRIPT = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** The serious and critical violations axe-core finds in the page as it is drawn now, one block each. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated, not added as a <script>: the UI's Content-Security-Policy (script-src 'self') refuses
  // an inline script, and rightly. A second check in the same document reuses the first's axe.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SCRIPT);
  const violations = await page.evaluate(async (tags) => {
    const found = await (
      window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Violation[] }> } }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: tags },
      resultTypes: ['violations'],
    });
    return found.violations;
  }, TAGS);
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => {
      const targets = violation.nodes.map((node) => node.target.map(String).join(' ')).slice(0, 5);
      const more =
        violation.nodes.length > targets.length ? ` and ${violation.nodes.length - targets.length} more` : '';
      const summary = (violation.nodes[0]?.failureSummary ?? '')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .slice(0, 3)
        .join(' ');
      return `${violation.id} (${violation.impact}): ${violation.help}\n  at ${targets.join(', ')}${more}\n  ${summary}`;
    });
}
