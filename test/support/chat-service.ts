import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/**
 * A local server implementing the parts of Slack's and Mattermost's documented APIs the approval
 * gates call (Slack's chat.postMessage, chat.update, chat.postEphemeral under /api; Mattermost's
 * POST and PUT /api/v4/posts under /mm), recording each call; and clicks signed as each documents.
 */
export interface ChatCall {
  path: string;
  auth: string;
  body: Record<string, unknown>;
}

export interface ChatService {
  /** Where Slack's Web API is (settings' slack.apiUrl) and where Mattermost is (mattermost.url). */
  slackApi: string;
  mattermostUrl: string;
  calls: ChatCall[];
  /** The calls to `path` (e.g. `POST /api/chat.update`) made after the first `since`. */
  callsTo(path: string, since: number): ChatCall[];
  close(): void;
}

export async function startChatService(): Promise<ChatService> {
  const calls: ChatCall[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      calls.push({ path: `${req.method ?? ''} ${req.url ?? ''}`, auth: req.headers.authorization ?? '', body });
      res.setHeader('Content-Type', 'application/json');
      if (req.url?.startsWith('/api/chat.')) res.end(JSON.stringify({ ok: true, channel: 'C0REFUNDS', ts: '1765000000.000100' }));
      else if (req.url === '/mm/api/v4/posts') res.end(JSON.stringify({ id: 'post-1', channel_id: body.channel_id }));
      else res.end(JSON.stringify({ id: 'post-1' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    slackApi: `${base}/api`,
    mattermostUrl: `${base}/mm`,
    calls,
    callsTo: (path, since) => calls.slice(since).filter((call) => call.path === path),
    close: () => server.close(),
  };
}

/**
 * A Slack button click as Slack sends it to `url`: form-encoded `payload`, signed with `secret` at
 * `at` (the v0 HMAC-SHA256 of `v0:{timestamp}:{body}`); another secret or an old `at` forges one.
 */
export async function slackClick(url: string, user: string, action: 'approve' | 'reject', value: string, secret: string, at = Math.floor(Date.now() / 1000)): Promise<number> {
  const payload = { type: 'block_actions', user: { id: user }, channel: { id: 'C0REFUNDS' }, container: { message_ts: '1765000000.000100' }, actions: [{ action_id: action, value }] };
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`;
  const response = await fetch(`${url}/integrations/slack/actions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Slack-Request-Timestamp': String(at), 'X-Slack-Signature': signature },
    body,
  });
  return response.status;
}

/** The value of a posted gate's Approve button, which a click sends back. */
export function approveValue(posted: ChatCall | undefined): string {
  const actions = (posted?.body.blocks as { type: string; elements?: { action_id: string; value: string }[] }[] | undefined)?.find((block) => block.type === 'actions');
  return actions?.elements?.[0]?.value ?? '';
}
