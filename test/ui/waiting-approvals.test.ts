import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDev, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, screenshot, useBrowser, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';
import { ACT_AS_HEADER } from '../../src/api/act-as.js';
import type { ResponseOf } from '../../src/api/responses.js';

/**
 * The Approvals page (issue 33, item 9), in Chromium against a real `spool dev`, at 1280 and 360 px,
 * light and dark: every gate waiting that the person viewing may answer (the user running spool dev,
 * or whom `spool --as`'s header names), with its prompt, run, how long it has waited and how many
 * approvals it still needs, answered in place; gates they may not answer are not there; and an
 * empty state that says what would be.
 */

const me = userInfo().username;
const gate = (name: string, extra: string) => `name: ${name}
jobs:
  ask:
    approval:
      prompt: "${name}?"
      timeout: 1h${extra}
`;

let dev: Dev;
const runs: Record<string, string> = {};

beforeAll(async () => {
  dev = await startDev();
  const documents = {
    // A gate anyone may answer, with a form; submitted by the person viewing, who may still answer it.
    refund: gate('Refund order 1042', '\n      form:\n        amount: { type: number, label: Amount (EUR), required: true, default: 480, min: 0, max: 10000 }'),
    // One only alice may answer; one the viewer submitted, so may not approve.
    audit: gate('Close the audit', '\n      approvers: {count: 1, from: [alice]}'),
    own: gate('Ship my own change', `\n      approvers: {count: 1, from: [${JSON.stringify(me)}, bob]}`),
  };
  // Submitted through the API as the CLI does: by the user running spool dev.
  for (const [name, script] of Object.entries(documents)) {
    const response = await fetch(`${dev.url}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow: `${name}.yaml`, interpreter: 'pipeline', script }) });
    runs[name] = ((await response.json()) as ResponseOf<'POST /runs'>).run.id;
  }
  // Two of the viewer and bob, made in the store, so no one submitted it and the viewer may approve it.
  runs.release = `dev:default:run-${'c'.repeat(16)}`;
  await dev.store.createRun({ id: runs.release, project: 'default', workflow: 'release.yaml', interpreter: 'pipeline', script: gate('Ship release 2.0', `\n      approvers: {count: 2, from: [${JSON.stringify(me)}, bob]}`) });
  for (const id of Object.values(runs)) await waitForChild(dev, id, 'ask', ['waiting']);
}, 120_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});
const browser = useBrowser();

const card = (page: import('playwright-core').Page, run: string) => page.locator(`article[data-run="${run}"]`);

describe.each(SCREENS)('the Approvals page on a screen $name', (screen) => {
  it('lists the gates the viewer may answer, with the prompt, the run, how long each waited and the approvals it still needs; not the ones they may not', async () => {
    const page = await browser.page(screen);
    await page.goto(`${dev.url}/runs`);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Approvals' }).click();
    await page.waitForURL(`${dev.url}/approvals`);
    await waitForText(page.locator('.viewer'), `Gates waiting that ${me} may answer`);
    const release = card(page, runs.release ?? '');
    await waitForText(release.locator('h2'), 'Ship release 2.0?');
    expect(await release.locator('.still-needed').textContent()).toBe('2 more approvals');
    expect(await release.locator('.gate-count').textContent()).toContain(`0 of 2 approvals · still to answer: ${me}, bob`);
    expect(await release.locator('.waited').textContent()).toMatch(/^[\d.]+ (ms|s|min)/);
    expect(decodeURIComponent((await release.locator('.gate-run a.run-id').getAttribute('href')) ?? '')).toBe(`/runs/${runs.release}`);
    const refund = card(page, runs.refund ?? '');
    expect(await refund.locator('.gate-run').textContent()).toContain(`submitted by ${me}`);
    expect(await refund.locator('.still-needed').textContent()).toBe('1 more approval');
    expect(await refund.getByLabel('Amount (EUR) (required)').inputValue()).toBe('480');
    // alice's audit, and the viewer's own change (they submitted it), are not theirs to answer.
    expect(await page.locator('article.gate').count()).toBe(2);
    expect(await card(page, runs.audit ?? '').count()).toBe(0);
    expect(await card(page, runs.own ?? '').count()).toBe(0);

    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
    if (screen.width === 1280 && screen.colorScheme === 'light') await screenshot(page, 'approvals-waiting');
  }, 60_000);
});

describe('answering on the Approvals page', () => {
  it('given the viewer approves, then the gate leaves their list and waits for bob, who sees it needing one more; answered, the list is empty and says what would show', async () => {
    const page = await browser.page();
    await page.goto(`${dev.url}/approvals`);
    const release = card(page, runs.release ?? '');
    await release.getByRole('button', { name: 'Approve' }).click();
    await waitForText(page.getByRole('status'), 'Answered “Ship release 2.0?”');
    await release.waitFor({ state: 'detached' });

    // bob, as `spool --as bob` names him: the gate needs one more, his.
    const bob = await browser.page({ width: 360, colorScheme: 'dark' });
    await bob.setExtraHTTPHeaders({ [ACT_AS_HEADER]: 'bob' });
    await bob.goto(`${dev.url}/approvals`);
    await waitForText(bob.locator('.viewer'), 'Gates waiting that bob may answer');
    const forBob = card(bob, runs.release ?? '');
    expect(await waitForText(forBob.locator('.still-needed'), '1 more approval')).toBe('1 more approval');
    expect(await forBob.locator('.gate-count').textContent()).toContain(`1 of 2 approvals: ${me}`);
    expect(await card(bob, runs.own ?? '').count()).toBe(1);
    await forBob.getByRole('button', { name: 'Approve' }).click();
    await forBob.waitFor({ state: 'detached' });
    expect((await waitForRun(dev.url, runs.release ?? '', ['succeeded'])).status).toBe('succeeded');

    // The refund's form, filled in place and approved.
    const refund = card(page, runs.refund ?? '');
    await refund.getByLabel('Amount (EUR) (required)').fill('120');
    await refund.getByRole('button', { name: 'Approve' }).click();
    await refund.waitFor({ state: 'detached' });
    expect((await waitForRun(dev.url, runs.refund ?? '', ['succeeded'])).status).toBe('succeeded');
    const empty = await waitForText(page.locator('.empty'), 'Nothing is waiting for you.');
    expect(empty).toContain('its approvers name you or a group you are in');
    expect(await axeViolations(page)).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
    expect(errorsOf(bob)).toEqual([]);
  }, 90_000);
});
