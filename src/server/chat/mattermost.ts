import type { ChatSettings } from './settings.js';

type Mattermost = NonNullable<ChatSettings['mattermost']>;

/** One call of Mattermost's REST API (v4) with the bot's token. */
export async function mattermostCall(mattermost: Mattermost, method: 'POST' | 'PUT', path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${mattermost.url.replace(/\/$/, '')}/api/v4${path}`, {
    method,
    headers: { Authorization: `Bearer ${mattermost.botToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) throw new Error(`Mattermost ${method} ${path}: ${String(answer.message ?? response.status)}`);
  return answer;
}

/**
 * An interactive message (Mattermost's message attachments with actions): each button calls the
 * integration URL back with its context, which names the gate and carries the callback token.
 */
export function mattermostGateProps(mattermost: Mattermost, callbackUrl: string, text: string, gate: { run: string; job: string }): Record<string, unknown> {
  const action = (id: string, name: string, style: string) => ({
    id,
    name,
    style,
    integration: { url: callbackUrl, context: { ...gate, decision: id, token: mattermost.callbackToken } },
  });
  return { attachments: [{ text, actions: [action('approve', 'Approve', 'good'), action('reject', 'Reject', 'danger')] }] };
}

export function mattermostSettledProps(text: string, outcome: string): Record<string, unknown> {
  return { attachments: [{ text, fields: [{ short: false, title: 'Answer', value: outcome }], actions: [] }] };
}
