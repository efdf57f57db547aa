import { describe, expect, it } from 'vitest';
import { getRun, journalOf, submit, useDevServer, waitForRun } from '../support/dev.js';
import { axeViolations } from '../support/axe.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { tempDir, writeFiles } from '../support/spool.js';
import type { RunWithScript } from '../../src/api/responses.js';

/**
 * The run page's Rerun and "Rerun from here" (docs/testing-workflows.md) in a real browser against
 * a real `spool dev`: the new run's page opens, links back to the old one, and the old one to it.
 */

const dev = useDevServer();
const browser = useBrowser();

const SCRIPT = `one=$(spool step one -- sh -c 'echo "$(od -An -N8 -tx8 /dev/urandom | tr -d " ") $SPOOL_IDEMPOTENCY_KEY"')
spool output set one "$one"
two=$(spool step two -- sh -c 'echo "$(od -An -N8 -tx8 /dev/urandom | tr -d " ") $SPOOL_IDEMPOTENCY_KEY"')
spool output set two "$two"
`;

describe('rerun from the run page', () => {
  it('given a run whose steps print random values, when "Rerun from here" is clicked on step two, then the new run keeps one, runs two afresh, and the pages link both ways', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'random.sh': SCRIPT });
    const oldId = await submit(dev.url, dir, 'random.sh');
    const old = await waitForRun(dev.url, oldId, ['succeeded']);

    const page = await browser.page();
    await page.goto(runPage(dev.url, oldId));
    await waitForPhase(page, 'succeeded');
    const row = (name: string) => page.locator(`.timeline tr[data-name="${name}"]`);
    await waitForText(row('two'), 'exit 0');
    // Only a step's row offers it: not the output set's.
    expect(await page.locator('.timeline tr[data-verb="output.set"]').getByRole('button', { name: 'Rerun from here' }).count()).toBe(0);
    await row('two').getByRole('button', { name: 'Rerun from here' }).click();

    // The new run's page opens, and says where it came from.
    await page.waitForURL((url) => url.pathname.startsWith('/runs/') && decodeURIComponent(url.pathname) !== `/runs/${oldId}`);
    const newId = decodeURIComponent(new URL(page.url()).pathname).slice('/runs/'.length);
    expect(newId).toMatch(/^dev:default:run-[a-z0-9]{16}$/);
    await waitForPhase(page, 'succeeded');
    expect(await waitForText(page.locator('.summary .rerun-of'), 'from step two')).toContain(oldId.split(':').at(-1) ?? '');

    const fresh = await getRun(dev.url, newId);
    expect(fresh.rerunOf).toEqual({ runId: oldId, fromStep: 'two' });
    expect(fresh.outputs.one).toBe(old.outputs.one);
    expect(fresh.outputs.two).not.toBe(old.outputs.two);
    expect(fresh.outputs.two?.split(' ')[1]).not.toBe(old.outputs.two?.split(' ')[1]);
    expect((await journalOf(dev.url, newId)).find((entry) => entry.name === 'one' && entry.kind === 'result')?.data).toEqual(
      (await journalOf(dev.url, oldId)).find((entry) => entry.name === 'one' && entry.kind === 'result')?.data,
    );

    // Back to the old run through the link; it lists its rerun.
    await page.locator('.summary .rerun-of a.run-id').click();
    await page.waitForURL(runPage(dev.url, oldId));
    await waitForText(page.locator('.summary .reruns'), newId.split(':').at(-1) ?? '');
    expect(((await getRun(dev.url, oldId)) as RunWithScript).reruns).toEqual([newId]);

    // Rerun from the top, from the page's head.
    await page.getByRole('button', { name: 'Rerun', exact: true }).click();
    await page.waitForURL((url) => ![`/runs/${oldId}`, `/runs/${newId}`].includes(decodeURIComponent(url.pathname)));
    await waitForPhase(page, 'succeeded');
    await waitForText(page.locator('.summary .rerun-of'), 'from the top');
    expect(errorsOf(page)).toEqual([]);
  }, 120_000);
});

describe('Rerun and "Rerun from here" on every screen', () => {
  it('are offered, fit the width and are large enough, axe finds nothing serious, and on a 360 px phone in the dark scheme "Rerun from here" opens the rerun', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'random.sh': SCRIPT });
    const oldId = await submit(dev.url, dir, 'random.sh');
    await waitForRun(dev.url, oldId, ['succeeded']);
    for (const screen of SCREENS) {
      const page = await browser.page(screen);
      await page.goto(runPage(dev.url, oldId));
      await waitForPhase(page, 'succeeded');
      const fromTwo = page.locator('.timeline tr[data-name="two"]').getByRole('button', { name: 'Rerun from here' });
      await fromTwo.waitFor();
      await page.getByRole('button', { name: 'Rerun', exact: true }).waitFor();
      expect(await sidewaysOverflow(page), screen.name).toBe(0);
      expect(await smallButtons(page), screen.name).toEqual([]);
      expect(await axeViolations(page), screen.name).toEqual([]);
      if (screen.width === 360 && screen.colorScheme === 'dark') {
        await fromTwo.click();
        await page.waitForURL((url) => decodeURIComponent(url.pathname) !== `/runs/${oldId}`);
        await waitForPhase(page, 'succeeded');
        await waitForText(page.locator('.summary .rerun-of'), 'from step two');
        expect(await sidewaysOverflow(page), screen.name).toBe(0);
        expect(await axeViolations(page), screen.name).toEqual([]);
        await screenshot(page, 'ui-rerun-phone', page.locator('.summary'));
      }
      expect(errorsOf(page), screen.name).toEqual([]);
      await page.context().close();
    }
  }, 60_000);
});

describe('retrying a failed activity from the run page', () => {
  it('given a run whose activity failed, when its cause is gone and "Rerun from here" is clicked on the activity, then the new run runs it again and succeeds, keeping the step before it', async () => {
    const dir = tempDir();
    const ready = join(dir, 'feed.ready');
    writeFiles(dir, {
      'feed.sh': `before=$(spool step before -- sh -c 'echo "$(od -An -N8 -tx8 /dev/urandom | tr -d " ")"')
spool output set before "$before"
feed=$(spool activity run fetch --requires shell -- sh -c 'test -e "$1" || { echo "the feed is not ready" >&2; exit 3; }; echo fed' _ ${JSON.stringify(ready)})
spool output set feed "$feed"
`,
    });
    const oldId = await submit(dev.url, dir, 'feed.sh');
    const old = await waitForRun(dev.url, oldId, ['failed']);
    writeFileSync(ready, '');

    const page = await browser.page({ width: 360, colorScheme: 'dark' });
    await page.goto(runPage(dev.url, oldId));
    await waitForPhase(page, 'failed');
    const fetchRow = page.locator('.timeline tr[data-name="fetch"]').first();
    await waitForText(fetchRow, 'exit 3');
    await fetchRow.getByRole('button', { name: 'Rerun from here' }).click();
    await page.waitForURL((url) => decodeURIComponent(url.pathname) !== `/runs/${oldId}`);
    await waitForPhase(page, 'succeeded');
    await waitForText(page.locator('.summary .rerun-of'), 'from step fetch');
    const newId = decodeURIComponent(new URL(page.url()).pathname).slice('/runs/'.length);
    const fresh = await getRun(dev.url, newId);
    expect(fresh.outputs).toEqual({ before: old.outputs.before, feed: 'fed' });
    expect((await getRun(dev.url, oldId)).status).toBe('failed');
    expect(errorsOf(page)).toEqual([]);
  }, 60_000);
});
