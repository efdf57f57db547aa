import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../http-error.js';
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

/** A click on a gate's button, as a signed callback's form says it. */
export interface SlackClick {
  userId: string;
  channel: string | null;
  action: 'approve' | 'reject';
  target: { run: string; job: string };
}

/**
 * Reads a signed callback's form: its `payload` (Slack's JSON), and in it the button's value (the
 * JSON slackGateBlocks put there). Null for anything else Slack may send (acknowledged, changes
 * nothing); a body that is not Slack's form, or a button value we did not write, is a 400.
 */
export function slackClickOf(body: string): SlackClick | null {
  const payload = jsonObject(new URLSearchParams(body).get('payload') ?? '{}', "the callback's payload");
  const user = objectOr(payload.user);
  const action = objectOr(Array.isArray(payload.actions) ? payload.actions[0] : undefined);
  if (payload.type !== 'block_actions' || (action.action_id !== 'approve' && action.action_id !== 'reject')) return null;
  const target = jsonObject(typeof action.value === 'string' ? action.value : '', "the button's value");
  return {
    userId: typeof user.id === 'string' ? user.id : '',
    channel: typeof objectOr(payload.channel).id === 'string' ? String(objectOr(payload.channel).id) : null,
    action: action.action_id,
    target: { run: String(target.run), job: String(target.job) },
  };
}

function jsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`${what} is not JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

const objectOr = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' ? (value as Record<string, unknown>) : {});

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
