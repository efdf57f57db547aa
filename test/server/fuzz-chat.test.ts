import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { approveValue, startChatService, slackClick, type ChatService } from '../support/chat-service.js';
import { poll, submit, waitForRun } from '../support/dev.js';
import { propertyRuns } from '../support/property.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * The chat callbacks (Slack's and Mattermost's buttons) under random and mutated requests (issue
 * 28), while a gate that only alice may answer waits: forged signatures, stale timestamps, bodies
 * that are not the form or the JSON each service sends, clicks with fields dropped or changed,
 * from anyone but alice. Each gets a 4xx with a code (401 when not signed as the service signs),
 * or the 200 a service expects for a click that changes nothing; no answer reaches the gate, the
 * run's journal is unchanged, and alice's real click afterwards still answers it.
 */

const SECRET = 'slack-signing-secret';
const MM_TOKEN = 'mattermost-callback-token';
let chat: ChatService;
let dev: DevServer;

beforeAll(async () => {
  chat = await startChatService();
  dev = await startDevServer({
    port: 0,
    dataDir: join(tempDir('spool-chat-fuzz-'), 'data'),
    pollMs: 50,
    chat: {
      slack: { botToken: 'xoxb-test', signingSecret: SECRET, apiUrl: chat.slackApi },
      mattermost: { url: chat.mattermostUrl, botToken: 'mm-bot', callbackToken: MM_TOKEN },
      publicUrl: 'https://spool.example.com',
      people: { U0ALICE: 'alice', U0BOB: 'bob', mmalice: 'alice', mmbob: 'bob' },
    },
  });
}, 60_000);

afterAll(async () => {
  await dev?.close();
  chat?.close();
  removeTempDirs();
});

const PIPELINE = `name: refund
jobs:
  ask:
    approval:
      prompt: "Refund order 1042?"
      notify:
        slack: "#refunds"
        mattermost: town-square
        answerers: [alice]
  refund:
    depends_on: [ask]
    steps:
      - name: refund
        run: echo "refunded, approved by \${{ steps.ask.output.answered_by }}"
`;

const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', '{', '{"run":', 'null', '[]', 'approve', 'reject', 'a\u0000b', 'x'.repeat(300), -1, 1e300, null, true, [], {}),
);
/**
 * A drawn value as the text of a body: String() of it, or its JSON where String() throws (a JSON
 * object with a key such as "toString" whose value is not a function, which fc.jsonValue draws).
 */
function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    return JSON.stringify(value);
  }
}
/** A field's value in a click: any value, or an object String() cannot convert, which a message naming it must survive. */
const fieldValue = fc.oneof(anyValue, fc.constant({ toString: {} }));
/** Anyone but alice, who alone may answer the gate: so no request made here may answer it. */
const notAlice = fc.oneof(fc.constantFrom('U0BOB', 'U0EVE', 'mmbob', 'mmnobody', '', 'alice', '__proto__'), fc.string({ maxLength: 12 }));

/** Drops, replaces or adds one field somewhere in `value` (an object of objects). */
const mutation = fc.tuple(fc.nat(), fc.constantFrom('drop', 'replace', 'add', 'none'), fc.string({ maxLength: 8 }), fieldValue);
function mutate(value: Record<string, unknown>, [pick, how, key, replacement]: [number, string, string, unknown]): Record<string, unknown> {
  const copy = structuredClone(value);
  const holders: [Record<string, unknown>, string][] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      holders.push([node as Record<string, unknown>, key]);
      walk(child);
    }
  };
  walk(copy);
  const [holder, at] = holders[pick % holders.length] ?? [copy, 'x'];
  if (how === 'drop') delete holder[at];
  else if (how === 'replace') holder[at] = replacement;
  else if (how === 'add') holder[key || 'extra'] = replacement;
  return copy;
}

interface Callback {
  path: string;
  headers: Record<string, string>;
  body: string;
  /**
   * What it must get: 401 when it is not signed as the service signs (or lacks its token); any
   * 4xx when it is not even the JSON the service sends; else a 4xx or 200.
   */
  refused: 'unsigned' | 'unreadable' | null;
}

const slackSign = (body: string, at: string, secret = SECRET) => `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`;

/** A Slack click (form-encoded `payload`), its payload mutated or its body any text, signed right or not. */
const slackCallback = (value: string) =>
  fc
    .tuple(
      notAlice,
      fc.constantFrom('approve', 'reject', 'other'),
      mutation,
      fc.constantFrom('payload', 'garbage', 'value', 'form'),
      anyValue,
      fc.constantFrom('signed', 'secret', 'stale', 'future', 'no-timestamp', 'no-signature', 'bad-timestamp', 'truncated'),
      fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', ''),
    )
    .map(([user, action, change, shape, other, signing, type]): Callback => {
      const click = { type: 'block_actions', user: { id: user }, channel: { id: 'C0REFUNDS' }, actions: [{ action_id: action, value }] };
      const payload = mutate(click, change);
      const body =
        shape === 'payload'
          ? `payload=${encodeURIComponent(JSON.stringify(payload))}`
          : shape === 'value'
            ? `payload=${encodeURIComponent(JSON.stringify({ ...click, actions: [{ action_id: action, value: textOf(other) }] }))}`
            : shape === 'form'
              ? `payload=${encodeURIComponent(textOf(other))}`
              : textOf(other);
      const now = Math.floor(Date.now() / 1000);
      const at = String(signing === 'stale' ? now - 600 : signing === 'future' ? now + 600 : now);
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      if (signing !== 'no-timestamp') headers['x-slack-request-timestamp'] = signing === 'bad-timestamp' ? `${at}.5` : at;
      if (signing !== 'no-signature') headers['x-slack-signature'] = signing === 'secret' ? slackSign(body, at, 'not-the-secret') : slackSign(body, at).slice(0, signing === 'truncated' ? 20 : undefined);
      return { path: '/integrations/slack/actions', headers, body, refused: signing === 'signed' ? null : 'unsigned' };
    });

/** A Mattermost click (JSON with the button's context), mutated, with the right token or not, or any text. */
const mattermostCallback = (context: Record<string, string>) =>
  fc
    .tuple(notAlice, mutation, fc.constantFrom('json', 'garbage', 'any-json'), anyValue, fc.constantFrom('token', 'wrong-token'), fc.constantFrom('application/json', 'text/plain'))
    .map(([user, change, shape, other, token, type]): Callback => {
      const click = { user_id: user, post_id: 'post-1', channel_id: 'town-square', context: { ...context, token: token === 'token' ? MM_TOKEN : 'wrong' } };
      const body = shape === 'json' ? JSON.stringify(mutate(click, change)) : shape === 'any-json' ? JSON.stringify(other) : textOf(other);
      const refused = shape !== 'json' || type !== 'application/json' ? 'unreadable' : token === 'token' ? null : 'unsigned';
      return { path: '/integrations/mattermost/actions', headers: { 'content-type': type }, body, refused };
    });

/** A body signed as Slack signs it now. */
function slackSigned(body: string): Callback {
  const at = String(Math.floor(Date.now() / 1000));
  return { path: '/integrations/slack/actions', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': at, 'x-slack-signature': slackSign(body, at) }, body, refused: null };
}
const form = (payload: unknown) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;

/** Counterexamples seeds found (each was a 500 `internal`), tried first on every run. */
const FOUND = (value: string): [Callback][] => [
  // A button value that is not JSON (seed 1469683381).
  [slackSigned(form({ type: 'block_actions', user: { id: '' }, channel: { id: 'C0REFUNDS' }, actions: [{ action_id: 'approve', value: '' }] }))],
  [slackSigned(form({ type: 'block_actions', user: { id: 'U0BOB' }, actions: [{ action_id: 'approve', value: 'approve' }] }))],
  // A payload that is not JSON, or JSON but no object, or an action that is none.
  [slackSigned('payload={')],
  [slackSigned(form(null))],
  [slackSigned(form({ type: 'block_actions', user: null, actions: [null] }))],
  [slackSigned(form({ type: 'block_actions', user: { id: 'U0BOB' }, actions: [{ action_id: 'approve', value }], channel: null }))],
];

const stateOf = async (id: string): Promise<string> => {
  const [journal, approvals] = await Promise.all([`/v1/runs/${encodeURIComponent(id)}/journal`, `/v1/runs/${encodeURIComponent(id)}/approvals`].map(async (path) => (await fetch(`${dev.url}${path}`)).text()));
  return `${journal}\n${approvals}`;
};

describe('the chat callbacks, fuzzed', () => {
  it('answer every forged or malformed click with a 4xx (or the 200 a click that changes nothing gets), answer no gate, record nothing, and alice’s click still works', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': PIPELINE });
    const id = await submit(dev.url, dir, 'refund.yaml');
    const [posted] = await poll('the gate’s messages', () => {
      const slack = chat.callsTo('POST /api/chat.postMessage', 0);
      return slack.length > 0 && chat.callsTo('POST /mm/api/v4/posts', 0).length > 0 ? slack : null;
    });
    const value = approveValue(posted);
    const mmContext = (chat.callsTo('POST /mm/api/v4/posts', 0)[0]?.body.props as { attachments: { actions: { integration: { context: Record<string, string> } }[] }[] }).attachments[0]?.actions[0]?.integration.context ?? {};
    await waitForRun(dev.url, id, ['waiting']);
    const before = await stateOf(id);

    await fc.assert(
      fc.asyncProperty(fc.oneof(slackCallback(value), mattermostCallback(mmContext)), async ({ path, headers, body, refused }) => {
        const response = await fetch(`${dev.url}${path}`, { method: 'POST', headers, body });
        const text = await response.text();
        const said = `${path} ${JSON.stringify(headers)} ${body} → ${response.status} ${text}`;
        if (refused === 'unsigned') expect(response.status, said).toBe(401);
        else if (refused === 'unreadable' || response.status !== 200) {
          expect(response.status, said).toBeGreaterThanOrEqual(400);
          expect(response.status, said).toBeLessThan(500);
        }
        if (response.status >= 400) expect((JSON.parse(text) as { error?: { code?: unknown } }).error?.code, said).toEqual(expect.any(String));
        expect(await stateOf(id), said).toBe(before);
      }),
      propertyRuns('chat callbacks', 300, FOUND(value)),
    );

    expect(await slackClick(dev.url, 'U0ALICE', 'approve', value, SECRET)).toBe(200);
    expect((await waitForRun(dev.url, id, ['succeeded'], 60_000)).status).toBe('succeeded');
  }, 180_000);

  it('given a gate anyone known may answer, then a click from the user id __proto__ or constructor is nobody’s: it answers nothing', async () => {
    const since = chat.calls.length;
    const dir = tempDir();
    writeFiles(dir, { 'open.yaml': PIPELINE.replace('name: refund', 'name: open').replace('        answerers: [alice]\n', '') });
    const id = await submit(dev.url, dir, 'open.yaml');
    const [posted] = await poll('the post', () => (chat.callsTo('POST /mm/api/v4/posts', since).length > 0 ? chat.callsTo('POST /mm/api/v4/posts', since) : null));
    const context = (posted?.body.props as { attachments: { actions: { integration: { context: Record<string, string> } }[] }[] }).attachments[0]?.actions[0]?.integration.context;
    await waitForRun(dev.url, id, ['waiting']);
    const before = await stateOf(id);

    for (const user of ['__proto__', 'constructor', 'toString']) {
      const response = await fetch(`${dev.url}/integrations/mattermost/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: user, context }) });
      expect(await response.json(), user).toMatchObject({ ephemeral_text: expect.stringContaining('not one of the people') as unknown });
    }
    expect(await stateOf(id)).toBe(before);
  }, 90_000);
});
