import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { finalLog, getRun, submit, waitForRun } from '../support/dev.js';
import { startChatService, slackClick as clickIn, type ChatService } from '../support/chat-service.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { poll } from '../support/dev.js';

/**
 * Approvals in Slack and Mattermost, against a local server that implements the parts of their
 * documented APIs the gates call (Slack's chat.postMessage, chat.update, chat.postEphemeral;
 * Mattermost's POST and PUT /api/v4/posts), and callbacks signed as each documents: Slack's
 * v0 HMAC-SHA256 of `v0:{timestamp}:{body}` with the signing secret, Mattermost's token in the
 * button's context.
 */

const SECRET = 'slack-signing-secret';
const MM_TOKEN = 'mattermost-callback-token';
let chat: ChatService;
let dev: DevServer;

beforeAll(async () => {
  chat = await startChatService();
  dev = await startDevServer({
    port: 0,
    dataDir: join(tempDir('spool-chat-'), 'data'),
    pollMs: 50,
    chat: {
      slack: { botToken: 'xoxb-test', signingSecret: SECRET, apiUrl: chat.slackApi },
      mattermost: { url: chat.mattermostUrl, botToken: 'mm-bot', callbackToken: MM_TOKEN },
      publicUrl: 'https://spool.example.com',
      people: { U0ALICE: 'alice', U0BOB: 'bob', U0CAROL: 'carol', mmalice: 'alice', mmbob: 'bob' },
    },
  });
}, 60_000);

afterAll(async () => {
  await dev?.close();
  chat?.close();
  removeTempDirs();
});

const pipeline = (notify: string, timeout = '1h'): string => `name: refund
jobs:
  ask:
    approval:
      prompt: "Refund order 1042, EUR 480?"
      timeout: ${timeout}
      notify:
${notify}
  refund:
    depends_on: [ask]
    if: \${{ !steps.ask.output.timed_out }}
    steps:
      - name: refund
        run: echo "refunded order 1042, approved by \${{ steps.ask.output.answered_by }}"
`;

const callsTo = (path: string, since: number) => chat.callsTo(path, since);
const slackClick = (user: string, action: 'approve' | 'reject', value: string, secret = SECRET, at?: number) => clickIn(dev.url, user, action, value, secret, at);

describe('approvals in Slack', () => {
  it('given a gate that notifies a channel, then it posts the prompt with Approve and Reject; forged, stale and unallowed clicks change nothing; alice’s Approve finishes the run and the message says so', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': pipeline('        slack: "#refunds"\n        answerers: [alice]') });
    const id = await submit(dev.url, dir, 'refund.yaml');
    const [posted] = await poll('the gate’s message', () => (callsTo('POST /api/chat.postMessage', since).length > 0 ? callsTo('POST /api/chat.postMessage', since) : null));
    expect(posted?.auth).toBe('Bearer xoxb-test');
    expect(posted?.body.channel).toBe('#refunds');
    expect(String(posted?.body.text)).toContain('Refund order 1042, EUR 480?');
    expect(String(posted?.body.text)).toContain(`https://spool.example.com/runs/${encodeURIComponent(id)}`);
    const actions = (posted?.body.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((block) => block.type === 'actions');
    expect(actions?.elements?.map((button) => button.action_id)).toEqual(['approve', 'reject']);
    const value = actions?.elements?.[0]?.value ?? '';
    expect(JSON.parse(value)).toEqual({ run: id, job: 'ask' });
    await waitForRun(dev.url, id, ['waiting']);

    // Signed with another secret, or signed right but ten minutes old (a replay): refused, nothing changes.
    expect(await slackClick('U0ALICE', 'approve', value, 'not-the-secret')).toBe(401);
    expect(await slackClick('U0ALICE', 'approve', value, SECRET, Math.floor(Date.now() / 1000) - 600)).toBe(401);
    // bob is a person this server knows, but not one of this gate's answerers; U0EVE is nobody.
    expect(await slackClick('U0BOB', 'approve', value)).toBe(200);
    expect(await slackClick('U0EVE', 'reject', value)).toBe(200);
    const told = callsTo('POST /api/chat.postEphemeral', since);
    expect(told.map((call) => call.body.user)).toEqual(['U0BOB', 'U0EVE']);
    expect(String(told[0]?.body.text)).toContain('You (bob) may not answer this approval; alice may.');
    expect(String(told[1]?.body.text)).toContain('not one of the people');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await getRun(dev.url, id)).status).toBe('waiting');
    expect(callsTo('POST /api/chat.update', since)).toEqual([]);

    expect(await slackClick('U0ALICE', 'approve', value)).toBe(200);
    expect((await waitForRun(dev.url, id, ['succeeded'], 60_000)).status).toBe('succeeded');
    expect(await finalLog(dev.url, id)).toContain('refunded order 1042, approved by alice');
    const [updated] = callsTo('POST /api/chat.update', since);
    expect(updated?.body).toMatchObject({ channel: 'C0REFUNDS', ts: '1765000000.000100' });
    expect(JSON.stringify(updated?.body.blocks)).toContain('Approved by alice.');
    expect(JSON.stringify(updated?.body.blocks)).not.toContain('"actions"');
    // The same click again: the first answer is final, and the clicker is told whose it was (issue 28, bug 5).
    expect(await slackClick('U0ALICE', 'approve', value)).toBe(200);
    expect(String(callsTo('POST /api/chat.postEphemeral', since).at(-1)?.body.text)).toMatch(/^The approval 'ask' was already approved by alice \(slack\) at \S+; the first answer is final\.$/);
  }, 90_000);

  it('given a gate nobody answers, then its message is updated to say it timed out', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': pipeline('        slack: C0REFUNDS', '2s') });
    const id = await submit(dev.url, dir, 'refund.yaml');
    await waitForRun(dev.url, id, ['succeeded'], 60_000);
    const [updated] = await poll('the update', () => (callsTo('POST /api/chat.update', since).length > 0 ? callsTo('POST /api/chat.update', since) : null));
    expect(JSON.stringify(updated?.body.blocks)).toContain('No answer in time');
  }, 90_000);
});

describe('approvals in Mattermost', () => {
  it('given a gate that notifies a channel, then it posts an interactive message; a click with a wrong token is refused; alice’s Reject cancels the run and updates the post', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': pipeline('        mattermost: town-square') });
    const id = await submit(dev.url, dir, 'refund.yaml');
    const [posted] = await poll('the post', () => (callsTo('POST /mm/api/v4/posts', since).length > 0 ? callsTo('POST /mm/api/v4/posts', since) : null));
    expect(posted?.auth).toBe('Bearer mm-bot');
    expect(posted?.body.channel_id).toBe('town-square');
    const attachment = (posted?.body.props as { attachments: { text: string; actions: { id: string; integration: { url: string; context: Record<string, string> } }[] }[] }).attachments[0];
    expect(attachment?.text).toContain('Refund order 1042, EUR 480?');
    // Mattermost's Markdown, not Slack's mrkdwn (which it shows as typed).
    expect(attachment?.text).toContain('**Approval needed:**');
    expect(attachment?.text).toContain(`[run page](https://spool.example.com/runs/${encodeURIComponent(id)})`);
    expect(attachment?.text).not.toContain('|run page>');
    expect(attachment?.actions.map((action) => action.id)).toEqual(['approve', 'reject']);
    const reject = attachment?.actions[1]?.integration;
    expect(reject?.url).toBe('https://spool.example.com/integrations/mattermost/actions');
    await waitForRun(dev.url, id, ['waiting']);

    const send = (context: Record<string, string>, user = 'mmalice') =>
      fetch(`${dev.url}/integrations/mattermost/actions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user_id: user, post_id: 'post-1', channel_id: 'town-square', context }) });
    expect((await send({ ...reject?.context, token: 'wrong' })).status).toBe(401);
    const stranger = await send(reject?.context ?? {}, 'mmnobody');
    expect(await stranger.json()).toMatchObject({ ephemeral_text: expect.stringContaining('not one of the people') as unknown });
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    expect((await send(reject?.context ?? {})).status).toBe(200);
    const run = await waitForRun(dev.url, id, ['cancelled']);
    expect(run.error).toBe('rejected at ask by alice');
    const [updated] = callsTo('PUT /mm/api/v4/posts/post-1', since);
    expect(JSON.stringify(updated?.body.props)).toContain('Rejected by alice');
  }, 90_000);

  it('given a gate posted only to Slack, when a Mattermost callback with the right token answers it, then it is refused and the gate still waits (issue 28, bug 10)', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': pipeline('        slack: "#refunds"') });
    const id = await submit(dev.url, dir, 'refund.yaml');
    await poll('the Slack message', () => callsTo('POST /api/chat.postMessage', since).length > 0);
    await waitForRun(dev.url, id, ['waiting']);

    const forged = await fetch(`${dev.url}/integrations/mattermost/actions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user_id: 'mmalice', post_id: 'post-x', channel_id: 'town-square', context: { token: MM_TOKEN, run: id, job: 'ask', decision: 'approve' } }),
    });

    expect(await forged.json()).toMatchObject({ ephemeral_text: 'This approval was not posted to Mattermost; answer it where it was asked.' });
    expect((await getRun(dev.url, id)).status).toBe('waiting');
    expect((await (await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/approvals`)).json()) as unknown).toMatchObject({ approvals: [{ state: 'waiting', answers: [] }] });
  }, 90_000);
});

/** A gate that asks two of alice, bob and carol (issue 33, item 11), posted where `notify` says. */
const twoOf = (notify: string): string => `name: release
jobs:
  ask:
    approval:
      prompt: "Ship 2.0?"
      timeout: 1h
      approvers:
        count: 2
        from: [alice, bob, carol]
      notify:
${notify}
  ship:
    depends_on: [ask]
    steps:
      - name: ship
        run: echo "shipped, approved by \${{ steps.ask.output.approvals[0].by }} and \${{ steps.ask.output.answered_by }}"
`;

describe('a gate with approvers in Slack and Mattermost', () => {
  it('given two of alice, bob and carol in Slack, then alice’s signed Approve counts and the message says 1 of 2 with its buttons kept; her second click is refused privately; bob’s opens the gate', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'release.yaml': twoOf('        slack: "#releases"') });
    const id = await submit(dev.url, dir, 'release.yaml');
    const [posted] = await poll('the gate’s message', () => (callsTo('POST /api/chat.postMessage', since).length > 0 ? callsTo('POST /api/chat.postMessage', since) : null));
    const value = (posted?.body.blocks as { type: string; elements?: { value: string }[] }[]).find((block) => block.type === 'actions')?.elements?.[0]?.value ?? '';
    await waitForRun(dev.url, id, ['waiting']);

    expect(await slackClick('U0ALICE', 'approve', value)).toBe(200);
    const [counted] = callsTo('POST /api/chat.update', since);
    expect(String(counted?.body.text)).toContain('1 of 2 approvals: alice');
    expect(JSON.stringify(counted?.body.blocks)).toContain('"actions"');
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    expect(await slackClick('U0ALICE', 'approve', value)).toBe(200);
    expect(String(callsTo('POST /api/chat.postEphemeral', since).at(-1)?.body.text)).toMatch(/^Alice already approved the approval 'ask' \(slack\) at \S+; each person answers once \(1 of 2 approvals\)\.$/);

    expect(await slackClick('U0BOB', 'approve', value)).toBe(200);
    expect((await waitForRun(dev.url, id, ['succeeded'], 60_000)).status).toBe('succeeded');
    expect(await finalLog(dev.url, id)).toContain('shipped, approved by alice and bob');
    const settled = callsTo('POST /api/chat.update', since).at(-1);
    expect(JSON.stringify(settled?.body.blocks)).toContain('Approved by alice, bob.');
    expect(JSON.stringify(settled?.body.blocks)).not.toContain('"actions"');
  }, 90_000);

  it('given two of alice, bob and carol in Mattermost, then alice’s and bob’s signed Approves each count, the post says 1 of 2 in between, and the run goes on', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'release.yaml': twoOf('        mattermost: town-square') });
    const id = await submit(dev.url, dir, 'release.yaml');
    const [posted] = await poll('the post', () => (callsTo('POST /mm/api/v4/posts', since).length > 0 ? callsTo('POST /mm/api/v4/posts', since) : null));
    const approve = (posted?.body.props as { attachments: { actions: { integration: { context: Record<string, string> } }[] }[] }).attachments[0]?.actions[0]?.integration.context ?? {};
    await waitForRun(dev.url, id, ['waiting']);
    const send = (user: string) =>
      fetch(`${dev.url}/integrations/mattermost/actions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user_id: user, post_id: 'post-1', channel_id: 'town-square', context: approve }) });

    expect(await (await send('mmalice')).json()).toEqual({});
    const [counted] = callsTo('PUT /mm/api/v4/posts/post-1', since);
    expect(JSON.stringify(counted?.body.props)).toContain('1 of 2 approvals: alice');
    expect(JSON.stringify(counted?.body.props)).toContain('"actions"');
    expect((await getRun(dev.url, id)).status).toBe('waiting');

    expect(await (await send('mmbob')).json()).toEqual({});
    expect((await waitForRun(dev.url, id, ['succeeded'], 60_000)).status).toBe('succeeded');
    expect(JSON.stringify(callsTo('PUT /mm/api/v4/posts/post-1', since).at(-1)?.body.props)).toContain('Approved by alice, bob.');
    const [gate] = ((await (await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/approvals`)).json()) as { approvals: { answers: { by: string; via: string; final: boolean }[] }[] }).approvals;
    expect(gate?.answers.map((each) => [each.by, each.via, each.final])).toEqual([
      ['alice', 'mattermost', false],
      ['bob', 'mattermost', true],
    ]);
  }, 90_000);
});
