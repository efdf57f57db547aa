import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { poll, submit, waitForRun } from '../support/dev.js';
import { startChatService, type ChatService } from '../support/chat-service.js';
import { errorsOf, runPage, screenshot, useBrowser, waitForPhase, waitForText, SCREENS } from '../support/browser.js';
import { smallButtons, sidewaysOverflow } from '../support/page-checks.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { waitForChild } from '../pipeline-run/pipeline-support.js';

/**
 * A gate with approvers on the run page (issue 33, item 11), at 1280 and 360 px, light and dark:
 * after alice approved in Mattermost it reads "1 of 2 approvals: alice" and who may still answer;
 * the person viewing it (the user running spool dev, who submitted the run) is refused with the
 * reason when they click Approve; bob's approval in Mattermost opens it, and the page says so.
 */

const me = userInfo().username;
const MM_TOKEN = 'mattermost-callback-token';
const DOCUMENT = `name: release
jobs:
  ask:
    approval:
      prompt: "Ship release 2.0?"
      timeout: 1h
      approvers:
        count: 2
        from: [alice, bob, ${JSON.stringify(me)}, "group:release-managers"]
      notify:
        mattermost: town-square
  ship:
    depends_on: [ask]
    steps:
      - name: ship
        run: echo shipped
`;

let chat: ChatService;
let dev: DevServer;
let id: string;
let context: Record<string, string>;

/** A signed Mattermost click on the gate's Approve, as the chat user `user`. */
const approveAs = async (user: string): Promise<unknown> =>
  (
    await fetch(`${dev.url}/integrations/mattermost/actions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user_id: user, post_id: 'post-1', channel_id: 'town-square', context }),
    })
  ).json();

beforeAll(async () => {
  chat = await startChatService();
  dev = await startDevServer({
    port: 0,
    dataDir: `${tempDir('spool-approvers-ui-')}/data`,
    pollMs: 50,
    chat: { mattermost: { url: chat.mattermostUrl, botToken: 'mm-bot', callbackToken: MM_TOKEN }, publicUrl: 'https://spool.example.com', people: { mmalice: 'alice', mmbob: 'bob' } },
  });
  const dir = tempDir();
  writeFiles(dir, { 'release.yaml': DOCUMENT });
  id = await submit(dev.url, dir, 'release.yaml');
  await waitForChild({ ...dev, dataDir: '' }, id, 'ask', ['waiting']);
  const [posted] = await poll('the post', () => (chat.callsTo('POST /mm/api/v4/posts', 0).length > 0 ? chat.callsTo('POST /mm/api/v4/posts', 0) : null));
  context = (posted?.body.props as { attachments: { actions: { integration: { context: Record<string, string> } }[] }[] }).attachments[0]?.actions[0]?.integration.context ?? {};
  expect(await approveAs('mmalice')).toEqual({});
}, 120_000);
afterAll(async () => {
  await dev?.close();
  chat?.close();
  removeTempDirs();
});
const browser = useBrowser();


describe.each(SCREENS)('a gate with approvers on a screen $name', (screen) => {
  it('says 1 of 2 approvals: alice and who may still answer; Approve from the submitter is refused with the reason, and the gate still waits', async () => {
    const page = await browser.page(screen);
    await page.goto(runPage(dev.url, id));
    const gate = page.locator('[data-gate="ask"]');
    const count = await waitForText(gate.locator('.gate-count'), '1 of 2 approvals: alice');
    expect(count).toContain(`still to answer: bob, ${me}, anyone in release-managers`);
    expect(await gate.locator('.gate-answers').textContent()).toMatch(/Approve by alice \(mattermost\).* — counted/);

    await gate.getByRole('button', { name: 'Approve' }).click();
    const refusal = await waitForText(gate.getByRole('alert'), 'may not approve');
    expect(refusal).toBe(`${me} submitted run ${id} and may not approve its approval 'ask'; it asks 2 of alice, bob, ${me}, group:release-managers`);
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await smallButtons(page)).toEqual([]);
    if (screen.width === 1280 && screen.colorScheme === 'light') await screenshot(page, 'approval-approvers');
    expect(errorsOf(page)).toEqual([]);
    expect(await gate.locator('.gate-count').textContent()).toContain('1 of 2 approvals: alice');
  }, 60_000);
});

describe('a gate with approvers, opened', () => {
  it('given bob approves in Mattermost, then the page shows it approved with 2 of 2 approvals: alice, bob', async () => {
    const page = await browser.page();
    await page.goto(runPage(dev.url, id));
    await waitForText(page.locator('[data-gate="ask"] .gate-count'), '1 of 2');
    expect(await approveAs('mmbob')).toEqual({});
    await waitForRun(dev.url, id, ['succeeded'], 60_000);
    await waitForPhase(page, 'succeeded');
    const gate = page.locator('[data-gate="ask"]');
    await waitForText(gate.locator('.gate-state'), 'Approved by bob');
    expect(await gate.locator('.gate-count').textContent()).toBe('2 of 2 approvals: alice, bob');
    expect(await gate.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(errorsOf(page)).toEqual([]);
  }, 90_000);
});
