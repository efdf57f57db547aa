import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getRun, submit, useDevServer, waitForRun } from '../support/dev.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText } from '../support/browser.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * The run page in a real browser (Debian's Chromium) against a real `spool dev`: the saga recipe's
 * failed run, a signal sent from the page, a fan_out's items linked from its parent, and the runs list.
 */

const dev = useDevServer();
const browser = useBrowser();

const SAGA = readFileSync(new URL('../../examples/saga.sh', import.meta.url), 'utf8');

describe('the run page', () => {
  it('given the saga recipe’s failed run, then it shows the three bookings, the failing step with its exit code and its stderr (on its row and in the log), the two cancels, and Failed', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'saga.sh': SAGA });
    const id = await submit(dev.url, dir, 'saga.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('failed');

    const page = await browser.page();
    await page.goto(runPage(dev.url, id));
    await waitForPhase(page, 'failed');
    expect(await page.locator('.page-head').textContent()).toContain('Failed');
    expect(await page.title()).toContain('failed');

    const row = (name: string) => page.locator(`.timeline tr[data-name="${name}"]`);
    await waitForText(row('book-flight'), 'FL-881');
    expect(await row('book-flight').textContent()).toContain('exit 0');
    expect(await row('book-hotel').textContent()).toContain('HT-2207');
    const car = row('book-car');
    expect(await car.getAttribute('class')).toContain('failed');
    expect(await car.textContent()).toContain('exit 1');
    // Why it failed, on its row: its stderr's last line (issue 33, item 5).
    expect(await car.locator('.stderr-tail').textContent()).toBe(' no cars left');
    const cancels = await row('cancel').allTextContents();
    expect(cancels).toHaveLength(2);
    expect(cancels[0]).toContain('(HT-2207)');
    expect(cancels[0]).toContain('cancelled HT-2207');
    expect(cancels[1]).toContain('(FL-881)');
    expect(await page.locator('.timeline-summary').textContent()).toContain('1 failed');

    const log = await waitForText(page.locator('.log'), 'cancelled FL-881');
    expect(log).toContain('no cars left');
    expect(log.indexOf('no cars left')).toBeLessThan(log.indexOf('cancelled HT-2207'));
    expect(await page.locator('.run-error').textContent()).toContain('script exited 1');
    // An ended run offers no cancel and no signal.
    expect(await page.getByRole('button', { name: 'Cancel run…' }).count()).toBe(0);
    await screenshot(page, 'run-page');
    expect(errorsOf(page)).toEqual([]);
  }, 90_000);

  it('given a run waiting on `spool wait signal approve`, when the page’s signal form sends it, then the run takes the payload and succeeds', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'wait.sh': `spool step hello -- echo hello
payload="$(spool wait signal approve)"
spool step done -- echo "got $payload"
`,
    });
    const id = await submit(dev.url, dir, 'wait.sh');
    expect((await waitForRun(dev.url, id, ['waiting'])).awaiting).toBe('signal approve');

    const page = await browser.page();
    await page.goto(runPage(dev.url, id));
    await waitForPhase(page, 'waiting');
    const name = page.getByLabel('Name');
    expect(await name.inputValue()).toBe('approve');
    // Not JSON: said so, and nothing is sent.
    await page.getByLabel('Payload (JSON, optional)').fill('{oops');
    await page.getByRole('button', { name: 'Send signal' }).click();
    await waitForText(page.locator('.form-error'), 'not JSON');
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    await page.getByLabel('Payload (JSON, optional)').fill('{"ok": true}');
    // Keyboard: Enter in the name field submits the form.
    await name.press('Enter');
    await waitForText(page.locator('.form-ok'), 'Sent signal approve');
    await waitForPhase(page, 'succeeded');
    await waitForText(page.locator('.log'), 'got {"ok":true}');
    expect(await page.locator('.timeline tr[data-verb="wait.signal"]').textContent()).toContain('{"ok":true}');
    expect(errorsOf(page)).toEqual([]);
  }, 90_000);

  it('given a fan_out with a workflow body, then the parent’s page links to each item’s page, and each item links back', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'probes.yaml': `name: probes
jobs:
  probe:
    fan_out:
      items: [eu-north, us-east, ap-south]
      workflow: probe.sh
`,
      'probe.sh': `region="$(python3 -c 'import json, os; print(json.load(open(os.environ["SPOOL_INPUT_FILE"]))["input"])' 2>/dev/null || echo unknown)"
spool step probe -- echo "probed $region"
`,
    });
    const id = await submit(dev.url, dir, 'probes.yaml');
    expect((await waitForRun(dev.url, id, ['succeeded'], 90_000)).status).toBe('succeeded');

    const page = await browser.page();
    await page.goto(runPage(dev.url, id));
    await waitForPhase(page, 'succeeded');
    const children = page.locator('table.children tbody tr');
    await waitForText(children.nth(2), 'probe[2]');
    expect(await children.count()).toBe(3);
    expect(await children.allTextContents()).toEqual([expect.stringContaining('probe[0]'), expect.stringContaining('probe[1]'), expect.stringContaining('probe[2]')]);

    const itemLink = children.nth(1).locator('a.run-id');
    const itemId = await itemLink.getAttribute('title');
    expect(itemId).toMatch(/^dev:default:run-/);
    await itemLink.click();
    await page.waitForURL(runPage(dev.url, itemId ?? ''));
    await waitForPhase(page, 'succeeded');
    await waitForText(page.locator('.summary'), id);
    expect(await page.locator('.timeline tr[data-name="probe"]').textContent()).toContain('probed');
    // Back to the parent through its link.
    await page.locator('.summary a.run-id').click();
    await page.waitForURL(runPage(dev.url, id));
    await waitForText(page.locator('h1'), id.split(':').at(-1) ?? '');
    expect(errorsOf(page)).toEqual([]);
  }, 120_000);

  it('the runs list shows every run newest first with its phase, filters by phase, and opens a run; its address is one to share', async () => {
    const page = await browser.page();
    await page.goto(`${dev.url}/runs`);
    const rows = page.locator('table.runs tbody tr');
    await rows.first().waitFor();
    const workflows = await page.locator('table.runs td.workflow').allTextContents();
    // Newest first: the fan_out's pipeline, then the signal's script, then the saga.
    expect(workflows.slice(0, 3)).toEqual(['probes.yaml', 'wait.sh', 'saga.sh']);
    await screenshot(page, 'runs-list');

    await page.getByLabel('Phase').selectOption('failed');
    await page.waitForURL(`${dev.url}/runs?status=failed`);
    await waitForText(page.locator('table.runs tbody'), 'saga.sh');
    expect(await page.locator('table.runs td.workflow').allTextContents()).toEqual(['saga.sh']);
    await page.locator('table.runs a.run-id').first().click();
    await waitForPhase(page, 'failed');
    expect(decodeURIComponent(new URL(page.url()).pathname)).toMatch(/^\/runs\/dev:default:run-[a-z0-9]{16}$/);

    // Nothing matches: the page says so and how to get back.
    await page.goto(`${dev.url}/runs?workflow=nothing-like-this.sh`);
    await waitForText(page.locator('.empty'), 'No runs match these filters.');
    await page.getByRole('link', { name: 'Clear the filters' }).click();
    await rows.first().waitFor();
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  // After the runs list's test, which counts the runs before it.
  it("given a run whose activity failed writing to stderr, then the activity's row shows its exit code and its stderr's last line, as a failed step's does", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fetch.sh': `spool activity run fetch -- sh -c 'echo partial; echo "retrying upstream" >&2; echo "upstream said 503" >&2; exit 3'\n` });
    const id = await submit(dev.url, dir, 'fetch.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('failed');

    const page = await browser.page();
    await page.goto(runPage(dev.url, id));
    await waitForPhase(page, 'failed');
    const fetch = page.locator('.timeline tr[data-name="fetch"]');
    await waitForText(fetch, 'exit 3');
    expect(await fetch.getAttribute('class')).toContain('failed');
    expect(await fetch.locator('.stderr-tail').textContent()).toBe(' upstream said 503');
    // The whole tail in its title.
    expect(await fetch.locator('.stderr-tail').getAttribute('title')).toBe('retrying upstream\nupstream said 503');
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);

  it('a run that does not exist gets a page that says "No such run", and the page stops asking after the 404', async () => {
    const page = await browser.page();
    const asked: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/v1/')) asked.push(request.url());
    });
    await page.goto(runPage(dev.url, 'dev:default:run-0000000000000000'));
    await waitForText(page.locator('h1'), 'No such run');
    expect(await page.locator('.empty').textContent()).toContain('Check the address');
    expect(await page.title()).toContain('No such run');
    const afterAnswer = asked.length;
    // Three of the page's 1.5 s polls later, it has asked nothing more.
    await page.waitForTimeout(4500);
    expect(asked.slice(afterAnswer)).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);

  it('a mistyped address gets the UI’s "No such page" with a way back, not the API’s JSON', async () => {
    const page = await browser.page();
    const response = await page.goto(`${dev.url}/runz`);
    expect(response?.status()).toBe(404);
    await waitForText(page.locator('h1'), 'No such page');
    await screenshot(page, 'no-such-page');
    await page.getByRole('link', { name: 'runs', exact: true }).click();
    await page.waitForURL(`${dev.url}/runs`);
    expect(errorsOf(page)).toEqual([]);
  }, 30_000);
});
