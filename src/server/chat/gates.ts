import { TERMINAL_STATUSES, type RunRecord } from '../../store/types.js';
import type { GateInput } from '../../pipeline/job-scripts.js';
import { listGates, type Gate } from '../approvals.js';
import type { ServerContext } from '../context.js';
import { mattermostCall, mattermostGateProps, mattermostSettledProps } from './mattermost.js';
import type { ChatSettings } from './settings.js';
import { slackCall, slackGateBlocks, slackSettledBlocks } from './slack.js';

/** Where a gate's message went; kept in a state cell so a gate is posted once, across restarts. */
export interface ChatPost {
  provider: 'slack' | 'mattermost';
  channel: string;
  /** Slack's message `ts`, Mattermost's post id. */
  id: string;
  gateRunId: string;
  runId: string;
  job: string;
  text: string;
  settled: boolean;
}

export const POSTS_SCOPE = 'chat-posts';

export type ChatContext = ServerContext & { chat: ChatSettings };

const postKey = (provider: string, gateRunId: string): string => `${provider}:${gateRunId}`;

export function notifyOf(run: RunRecord): NonNullable<GateInput['approval']['notify']> | null {
  const approval = (run.input as Partial<GateInput> | null)?.approval;
  return approval && typeof approval === 'object' && approval.notify ? approval.notify : null;
}

/**
 * The gate's message in each service's own markup: Slack's mrkdwn (`*bold*`, `<url|text>`),
 * Mattermost's Markdown (`**bold**`, `[text](url)`), where Slack's would show as typed.
 */
function messageText(ctx: ChatContext, gate: RunRecord, prompt: string, provider: 'slack' | 'mattermost'): string {
  const url = ctx.chat.publicUrl ? `${ctx.chat.publicUrl.replace(/\/$/, '')}/runs/${encodeURIComponent(gate.parentId ?? '')}` : null;
  const where = `Run \`${gate.parentId ?? ''}\`, job \`${(gate.input as GateInput).approval.job}\`.`;
  if (provider === 'mattermost') return `**Approval needed:** ${prompt}\n${where}${url ? ` [run page](${url})` : ''}`;
  return `*Approval needed:* ${prompt}\n${where}${url ? ` <${url}|run page>` : ''}`;
}

/** What came of a gate, in the words its message is updated with. */
export function outcomeOf(gate: Gate | undefined): string {
  switch (gate?.state) {
    case 'approved':
      return `Approved${gate.answeredBy ? ` by ${gate.answeredBy}` : ''}.`;
    case 'rejected':
      return `Rejected${gate.answeredBy ? ` by ${gate.answeredBy}` : ''}: the run is cancelled.`;
    case 'timed_out':
      return 'No answer in time: the gate timed out and the run went on without it.';
    case 'failed':
      return 'The gate failed.';
    default:
      return 'The run was cancelled before anyone answered.';
  }
}

export async function savePost(ctx: ServerContext, project: string, post: ChatPost): Promise<void> {
  await ctx.store.setCell(project, POSTS_SCOPE, postKey(post.provider, post.gateRunId), JSON.stringify(post));
}

/**
 * A gate with approvers that has some of them: its message says how many and whose, its buttons
 * stay for the others.
 */
export async function countOnPost(ctx: ChatContext, post: ChatPost, count: string): Promise<void> {
  const text = `${post.text}\n${count}`;
  const target = { run: post.runId, job: post.job };
  if (post.provider === 'slack' && ctx.chat.slack) {
    await slackCall(ctx.chat.slack, 'chat.update', { channel: post.channel, ts: post.id, text, blocks: slackGateBlocks(text, target) });
  } else if (post.provider === 'mattermost' && ctx.chat.mattermost) {
    const callback = `${(ctx.chat.publicUrl ?? '').replace(/\/$/, '')}/integrations/mattermost/actions`;
    await mattermostCall(ctx.chat.mattermost, 'PUT', `/posts/${post.id}`, { id: post.id, message: '', props: mattermostGateProps(ctx.chat.mattermost, callback, text, target) });
  }
}

/** Replaces a gate's message with what came of it: no buttons left to press. */
export async function settlePost(ctx: ChatContext, project: string, post: ChatPost, outcome: string): Promise<void> {
  if (post.provider === 'slack' && ctx.chat.slack) {
    await slackCall(ctx.chat.slack, 'chat.update', { channel: post.channel, ts: post.id, text: `${post.text}\n${outcome}`, blocks: slackSettledBlocks(post.text, outcome) });
  } else if (post.provider === 'mattermost' && ctx.chat.mattermost) {
    await mattermostCall(ctx.chat.mattermost, 'PUT', `/posts/${post.id}`, { id: post.id, message: '', props: mattermostSettledProps(post.text, outcome) });
  }
  await savePost(ctx, project, { ...post, settled: true });
}

async function post(ctx: ChatContext, gate: RunRecord, provider: 'slack' | 'mattermost', channel: string): Promise<void> {
  const input = (gate.input as GateInput).approval;
  const text = messageText(ctx, gate, input.prompt, provider);
  const target = { run: gate.parentId ?? '', job: input.job };
  let id = '';
  if (provider === 'slack' && ctx.chat.slack) {
    const answer = await slackCall(ctx.chat.slack, 'chat.postMessage', { channel, text, blocks: slackGateBlocks(text, target) });
    id = String(answer.ts ?? '');
    channel = String(answer.channel ?? channel);
  } else if (provider === 'mattermost' && ctx.chat.mattermost) {
    const callback = `${(ctx.chat.publicUrl ?? '').replace(/\/$/, '')}/integrations/mattermost/actions`;
    const answer = await mattermostCall(ctx.chat.mattermost, 'POST', '/posts', { channel_id: channel, message: '', props: mattermostGateProps(ctx.chat.mattermost, callback, text, target) });
    id = String(answer.id ?? '');
  } else {
    return;
  }
  await savePost(ctx, gate.project, { provider, channel, id, gateRunId: gate.id, runId: target.run, job: input.job, text, settled: false });
}

/**
 * One look at the gates: each gate waiting with a `notify:` whose message is not posted yet is
 * posted, and each posted message whose gate has ended (answered on the run page or in a
 * terminal, timed out, cancelled) is updated to say how. The server calls it every second.
 */
export async function notifyGates(ctx: ChatContext, failed: (error: Error) => void): Promise<void> {
  const open = await ctx.store.listRuns({ status: ['pending', 'running', 'waiting'], limit: 1000 });
  const projects = new Set<string>([ctx.defaultProject]);
  for (const gate of open) {
    const notify = notifyOf(gate);
    if (!notify || !gate.parentId) continue;
    projects.add(gate.project);
    for (const provider of ['slack', 'mattermost'] as const) {
      const channel = notify[provider];
      if (!channel || (await ctx.store.getCell(gate.project, POSTS_SCOPE, postKey(provider, gate.id)))) continue;
      await post(ctx, gate, provider, channel).catch(failed);
    }
  }
  for (const project of projects) {
    for (const cell of await ctx.store.listCells(project, POSTS_SCOPE)) {
      const saved = JSON.parse(cell.value) as ChatPost;
      if (saved.settled) continue;
      const gateRun = await ctx.store.getRun(saved.gateRunId);
      if (gateRun && !TERMINAL_STATUSES.includes(gateRun.status)) continue;
      const parent = await ctx.store.getRun(saved.runId);
      const gate = parent ? (await listGates(ctx, parent)).find((candidate) => candidate.runId === saved.gateRunId) : undefined;
      await settlePost(ctx, project, saved, outcomeOf(gate)).catch(failed);
    }
  }
}

const toStderr = (error: Error): void => {
  process.stderr.write(`spool: chat: ${error.message}\n`);
};

/**
 * Runs notifyGates every `everyMs` until stopped; a failure is reported (on stderr unless `report`
 * says otherwise: the operator logs it as JSON) and the next look tries again.
 */
export function startGateNotifier(ctx: ChatContext, report: (error: Error) => void = toStderr, everyMs = 1000): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => notifyGates(ctx, report)).catch(report);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
