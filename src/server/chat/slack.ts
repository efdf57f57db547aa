import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ChatSettings } from './settings.js';
import { SLACK_WINDOW_S } from './settings.js';

type Slack = NonNullable<ChatSettings['slack']>;

/**
 * Checks a callback as Slack documents ("Verifying requests from Slack"): the base string
 * `v0:{X-Slack-Request-Timestamp}:{raw body}` signed with the signing secret (HMAC-SHA256, hex,
 * prefixed `v0=`) must equal X-Slack-Signature, and the timestamp must be within five minutes of
 * now, so a recorded request cannot be played again later. Answers why it refuses, or null.
 */
export function slackRefusal(slack: Slack, headers: { timestamp?: string; signature?: string }, rawBody: string, nowS: number): string | null {
  const timestamp = Number(headers.timestamp);
  if (!headers.timestamp || !Number.isInteger(timestamp)) return 'no X-Slack-Request-Timestamp';
  if (Math.abs(nowS - timestamp) > SLACK_WINDOW_S) return `the request's timestamp is ${Math.round(Math.abs(nowS - timestamp))}s from now (more than ${SLACK_WINDOW_S}s): a replay`;
  const expected = `v0=${createHmac('sha256', slack.signingSecret).update(`v0:${headers.timestamp}:${rawBody}`).digest('hex')}`;
  const given = headers.signature ?? '';
  if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) return 'the signature does not match';
  return null;
}

/** One call of Slack's Web API (JSON body, bot token); Slack answers 200 with `ok: false` on errors. */
export async function slackCall(slack: Slack, method: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${(slack.apiUrl ?? 'https://slack.com/api').replace(/\/$/, '')}/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${slack.botToken}`, 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || answer.ok !== true) throw new Error(`Slack ${method}: ${String(answer.error ?? response.status)}`);
  return answer;
}

/** What a gate's message says and the Approve and Reject buttons (Block Kit), whose value names the gate. */
export function slackGateBlocks(text: string, gate: { run: string; job: string }): unknown[] {
  const value = JSON.stringify(gate);
  return [
    { type: 'section', text: { type: 'mrkdwn', text } },
    {
      type: 'actions',
      block_id: 'spool-approval',
      elements: [
        { type: 'button', action_id: 'approve', style: 'primary', text: { type: 'plain_text', text: 'Approve' }, value },
        { type: 'button', action_id: 'reject', style: 'danger', text: { type: 'plain_text', text: 'Reject' }, value },
      ],
    },
  ];
}

/** The message once the gate is settled: what it asked and what came of it, no buttons. */
export function slackSettledBlocks(text: string, outcome: string): unknown[] {
  return [
    { type: 'section', text: { type: 'mrkdwn', text } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: outcome }] },
  ];
}
