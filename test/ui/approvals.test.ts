import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalLog, getRun, startDev, submit, waitForRun } from '../support/dev.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { childrenOf, jobsThatRan, waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/**
 * Approval gates answered from the run page in a real browser: the refund recipe approved (the jobs
 * the seed's table lists run) and rejected (the run is cancelled), and a gate with a form whose two
 * values the next job prints.
 */

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

/** The recipe's document (test/pipeline/fixtures/refund.yaml) with its 2d and 1d timeouts kept long. */
const REFUND = readFileSync(new URL('../pipeline/fixtures/refund.yaml', import.meta.url), 'utf8');

const FORM = `name: refund-form
jobs:
  ask:
    approval:
      prompt: "Refund order \${{ input.order }}?"
      timeout: 1h
      form:
        amount:
          type: number
          label: Amount (EUR)
          required: true
          default: 480
          min: 0
          max: 10000
        reason:
          type: string
          label: Reason
          required: true
          options: [damaged, late, other]
  refund:
    depends_on: [ask]
    if: \${{ steps.ask.output.approved }}
    steps:
      - name: refund
        run: echo "refunding \${{ steps.ask.output.amount }} EUR for order \${{ input.order }} because \${{ steps.ask.output.reason }}, approved by \${{ steps.ask.output.answered_by }}"
`;

const me = userInfo().username;

async function openWaitingGate(file: string, text: string, job: string, ...extra: string[]): Promise<{ id: string; page: Awaited<ReturnType<typeof browser.page>> }> {
  const dir = tempDir();
  writeFiles(dir, { [file]: text });
  const id = await submit(dev.url, dir, file, ...extra);
  await waitForChild(dev, id, job, ['waiting']);
  const page = await browser.page();
  await page.goto(runPage(dev.url, id));
  await page.locator(`[data-gate="${job}"] button.approve`).waitFor();
  return { id, page };
}

describe('approvals on the run page', () => {
  it('given the refund pipeline waiting at ask, when Approve is clicked, then the run finishes having run ask and refund, and the page says who approved', async () => {
    const { id, page } = await openWaitingGate('refund.yaml', REFUND, 'ask');
    const gate = page.locator('[data-gate="ask"]');
    expect(await gate.locator('h3').textContent()).toContain('Refund order 1042, EUR 480?');
    expect(await gate.textContent()).toContain('times out in 2 d');
    expect(await page.locator('.summary').textContent()).toContain('approval ask');
    await screenshot(page, 'approval');

    await gate.getByRole('button', { name: 'Approve' }).click();
    await waitForPhase(page, 'succeeded', 90_000);
    expect(await jobsThatRan(dev, id)).toEqual(['ask', 'refund']);
    const log = await finalLog(dev.url, id);
    expect(log).toContain('refunded order 1042');
    expect(log).not.toContain('asking the team lead');
    await waitForText(gate.locator('.gate-state'), `Approved by ${me}`);
    expect(await page.locator('[data-gate="ask"] button').count()).toBe(0);
    expect(errorsOf(page)).toEqual([]);
  }, 120_000);

  it('given the refund pipeline waiting at ask, when Reject is clicked, then it asks once more; kept, the gate waits; confirmed, the run is cancelled and no refund runs', async () => {
    const { id, page } = await openWaitingGate('refund.yaml', REFUND, 'ask');
    const gate = page.locator('[data-gate="ask"]');
    await gate.getByRole('button', { name: 'Reject…' }).click();
    // Not yet: it asks, with the focus on the confirming button, as Cancel run does.
    const confirm = gate.getByRole('group', { name: 'Reject this approval?' });
    await waitForText(confirm, 'The whole run is cancelled');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Yes, reject');
    expect((await getRun(dev.url, id)).status).toBe('waiting');
    await confirm.getByRole('button', { name: 'Keep waiting' }).click();
    await gate.getByRole('button', { name: 'Approve' }).waitFor();
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    await gate.getByRole('button', { name: 'Reject…' }).click();
    await confirm.getByRole('button', { name: 'Yes, reject' }).click();
    await waitForPhase(page, 'cancelled');
    const run = await waitForRun(dev.url, id, ['cancelled']);
    expect(run.error).toBe(`rejected at ask by ${me}`);
    expect((await childrenOf(dev, id)).map((child) => child.workflow)).toEqual(['refund.yaml#ask']);
    expect(await finalLog(dev.url, id)).not.toContain('refunded order 1042');
    await waitForText(page.locator('[data-gate="ask"] .gate-state'), `Rejected by ${me}`);
    expect(errorsOf(page)).toEqual([]);
  }, 120_000);

  it('given a gate with a form of two fields, when they are filled in and approved, then the next job prints both values', async () => {
    const { id, page } = await openWaitingGate('refund-form.yaml', FORM, 'ask', '--input', '{"order": 1042}');
    const gate = page.locator('[data-gate="ask"]');
    expect(await gate.locator('h3').textContent()).toContain('Refund order 1042?');
    const amount = gate.getByLabel('Amount (EUR)');
    expect(await amount.inputValue()).toBe('480');
    // A required field left empty: the browser keeps the form back, and nothing is sent.
    await amount.fill('');
    await gate.getByRole('button', { name: 'Approve' }).click();
    expect(await amount.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
    expect((await getRun(dev.url, id)).status).toBe('waiting');
    // Below the field's min (0): kept back too.
    await amount.fill('-5000');
    expect(await amount.getAttribute('min')).toBe('0');
    await gate.getByRole('button', { name: 'Approve' }).click();
    expect(await amount.evaluate((input: HTMLInputElement) => input.validity.rangeUnderflow)).toBe(true);
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    await amount.fill('450.5');
    await gate.getByLabel('Reason').selectOption('late');
    await screenshot(page, 'approval-form');
    // Keyboard only: focus Approve and press Enter.
    await gate.getByRole('button', { name: 'Approve' }).focus();
    await page.keyboard.press('Enter');
    await waitForPhase(page, 'succeeded', 90_000);
    const log = await finalLog(dev.url, id);
    expect(log).toContain(`refunding 450.5 EUR for order 1042 because late, approved by ${me}`);
    await waitForText(gate, 'Amount (EUR)450.5');
    expect(await gate.textContent()).toContain('Reasonlate');
    expect(errorsOf(page)).toEqual([]);
  }, 120_000);
});

describe('a gate on every screen', () => {
  it('asks once more on Reject…, leaving the gate waiting when kept, and keeps back a number below its min', async () => {
    const { id, page: first } = await openWaitingGate('refund-form.yaml', FORM, 'ask', '--input', '{"order": 1044}');
    await first.context().close();
    for (const screen of SCREENS) {
      const page = await browser.page(screen);
      await page.goto(runPage(dev.url, id));
      const gate = page.locator('[data-gate="ask"]');
      await gate.getByRole('button', { name: 'Reject…' }).click();
      const confirm = gate.getByRole('group', { name: 'Reject this approval?' });
      await waitForText(confirm, 'The whole run is cancelled');
      if (screen.width === 360 && screen.colorScheme === 'dark') await screenshot(page, 'approval-reject-phone', gate);
      await confirm.getByRole('button', { name: 'Keep waiting' }).click();
      await gate.getByRole('button', { name: 'Approve' }).waitFor();
      const amount = gate.getByLabel('Amount (EUR)');
      await amount.fill('-5000');
      await gate.getByRole('button', { name: 'Approve' }).click();
      expect(await amount.evaluate((input: HTMLInputElement) => input.validity.rangeUnderflow), screen.name).toBe(true);
      expect((await getRun(dev.url, id)).status, screen.name).toBe('waiting');
      expect(errorsOf(page), screen.name).toEqual([]);
      await page.context().close();
    }
  }, 60_000);
});
