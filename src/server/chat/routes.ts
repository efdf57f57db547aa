import { timingSafeEqual } from 'node:crypto';
import express, { Router, type Request } from 'express';
import { answerGate, approvalCount, listGates, type Answered, type Decision } from '../approvals.js';
import type { ServerContext } from '../context.js';
import { HttpError } from '../http-error.js';
import { countOnPost, notifyOf, outcomeOf, POSTS_SCOPE, settlePost, type ChatContext, type ChatPost } from './gates.js';
import type { ChatSettings } from './settings.js';
import { slackCall, slackClickOf, slackRefusal } from './slack.js';

interface Click {
  person: string | null;
  run: string;
  job: string;
  decision: Decision;
}

/** `counted`: a gate with approvers took an approval and waits for more; its message keeps its buttons. */
type Said = { ok: true; outcome: string; counted: boolean; post: ChatPost | null; project: string } | { ok: false; message: string };

/**
 * What a click on a gate's button does: the chat user must map to a person, and to one of the
 * gate's answerers when it names them; then the gate is answered as that person, and its message
 * says who answered and how. Anything else is said back to the one who clicked, and changes nothing.
 */
async function click(ctx: ChatContext, { person, run: runId, job, decision }: Click, provider: 'slack' | 'mattermost'): Promise<Said> {
  const run = await ctx.store.getRun(runId);
  const gates = run ? await listGates(ctx, run) : [];
  const gate = gates.find((candidate) => candidate.job === job);
  const gateRun = gate ? await ctx.store.getRun(gate.runId) : null;
  if (!run || !gate || !gateRun) return { ok: false, message: `There is no approval '${job}' in run ${runId}.` };
  const answerers = notifyOf(gateRun)?.answerers;
  if (!person) return { ok: false, message: 'You may not answer approvals from here: your chat account is not one of the people this server knows.' };
  if (answerers && !answerers.includes(person)) return { ok: false, message: `You (${person}) may not answer this approval; ${answerers.join(', ')} may.` };
  // A callback answers only a gate that was posted through it (issue 28, bug 10): a Mattermost token
  // answered any gate, also one never posted there.
  const cell = await ctx.store.getCell(gateRun.project, POSTS_SCOPE, `${provider}:${gateRun.id}`);
  if (!cell) return { ok: false, message: `This approval was not posted to ${provider === 'slack' ? 'Slack' : 'Mattermost'}; answer it where it was asked.` };
  let answered: Answered;
  try {
    answered = await answerGate(ctx, run, job, decision, undefined, { user: person, groups: [] }, provider);
  } catch (error) {
    if (error instanceof HttpError && (error.status === 409 || error.status === 403)) return { ok: false, message: `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.` };
    if (error instanceof HttpError && error.status === 404) return { ok: false, message: `This approval is no longer waiting (${gate.state.replace('_', ' ')}).` };
    if (error instanceof HttpError && error.status === 400) return { ok: false, message: `This approval's form needs answers: use the run page. (${error.message})` };
    throw error;
  }
  const post = JSON.parse(cell.value) as ChatPost;
  const count = answered.approvals;
  if (decision === 'approve' && count && count.counted < count.needed) {
    return { ok: true, outcome: approvalCount(count), counted: true, post, project: gateRun.project };
  }
  const settled = (await listGates(ctx, (await ctx.store.getRun(runId)) ?? run)).find((candidate) => candidate.runId === gate.runId);
  // Approving lands when the gate's run takes the signal; the answer is known now.
  const outcome = decision === 'approve' ? `Approved by ${count ? count.by.join(', ') : person}.` : outcomeOf(settled);
  return { ok: true, outcome, counted: false, post, project: gateRun.project };
}

/** The person a chat user id maps to: only the ids `people` names (not `__proto__`, `constructor`...). */
const personOf = (settings: ChatSettings, userId: unknown): string | null =>
  typeof userId === 'string' && Object.hasOwn(settings.people, userId) ? (settings.people[userId] ?? null) : null;

const safeEqual = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The callbacks of the chat services' buttons, outside /v1: they carry no Kubernetes identity, and
 * are believed only when signed as each service documents (Slack's signing secret and timestamp;
 * Mattermost's token in the button's context). Slack posts a form-encoded body, read raw here
 * because the signature covers the exact bytes.
 */
export function chatRoutes(ctx: ServerContext): Router {
  const router = Router();
  const settings = ctx.chat;
  if (!settings) return router;
  const chat = { ...ctx, chat: settings } as ChatContext;
  const raw = express.raw({ type: () => true, limit: '1mb' });

  router.post('/slack/actions', raw, async (req: Request, res) => {
    const slack = settings.slack;
    if (!slack) throw new HttpError(404, 'not_found', 'Slack is not set up on this server');
    const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const refusal = slackRefusal(slack, { timestamp: req.get('x-slack-request-timestamp'), signature: req.get('x-slack-signature') }, body, ctx.now().getTime() / 1000);
    if (refusal) throw new HttpError(401, 'bad_signature', `not a request from Slack: ${refusal}`);
    const clicked = slackClickOf(body);
    if (!clicked) {
      res.status(200).end();
      return;
    }
    const { userId, channel, action, target } = clicked;
    const said = await click(chat, { person: personOf(settings, userId), run: target.run, job: target.job, decision: action }, 'slack');
    if (said.ok) {
      if (said.post) await (said.counted ? countOnPost(chat, said.post, said.outcome) : settlePost(chat, said.project, said.post, said.outcome));
    } else if (channel) {
      await slackCall(slack, 'chat.postEphemeral', { channel, user: userId, text: said.message });
    }
    res.status(200).end();
  });

  router.post('/mattermost/actions', express.json({ limit: '1mb' }), async (req: Request, res) => {
    const mattermost = settings.mattermost;
    if (!mattermost) throw new HttpError(404, 'not_found', 'Mattermost is not set up on this server');
    // Any JSON may arrive here: a field that is not a string is treated as absent (String() of an
    // object may throw).
    const body = (req.body ?? {}) as { user_id?: unknown; context?: { run?: unknown; job?: unknown; decision?: unknown; token?: unknown } };
    const context = typeof body.context === 'object' && body.context !== null ? body.context : {};
    if (!safeEqual(typeof context.token === 'string' ? context.token : '', mattermost.callbackToken)) throw new HttpError(401, 'bad_token', 'not a request from Mattermost: the token does not match');
    if (context.decision !== 'approve' && context.decision !== 'reject') throw new HttpError(400, 'bad_request', 'unknown action');
    if (typeof context.run !== 'string' || typeof context.job !== 'string') throw new HttpError(400, 'bad_request', "the button's context names no run and job");
    const said = await click(chat, { person: personOf(settings, body.user_id), run: context.run, job: context.job, decision: context.decision }, 'mattermost');
    if (!said.ok) {
      res.json({ ephemeral_text: said.message });
      return;
    }
    if (said.post) await (said.counted ? countOnPost(chat, said.post, said.outcome) : settlePost(chat, said.project, said.post, said.outcome));
    res.json({});
  });

  return router;
}
