import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { approveValue, slackClick, startChatService, type ChatService } from '../support/chat-service.js';
import { removeTempDirs } from '../support/spool.js';
import { untilPhase, eventually, getRun, givenWorkflow, startCluster, startKubelet, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * Approvals in Slack from the operator (`spool operator --chat FILE`): the leader posts a Run's
 * gate to the channel its pipeline names, and the click reaches the operator's API port, against a
 * local server that implements Slack's documented calls and signs clicks as Slack does
 * (test/support/chat-service.ts). The same settings and routes as on spool dev
 * (test/server/chat-approvals.test.ts, which covers Mattermost and the refusals one by one).
 */
const SECRET = 'slack-signing-secret';
const REFUND = `name: refund
jobs:
  ask:
    approval:
      prompt: "Refund order 1042, EUR 480?"
      timeout: 1h
      notify:
        slack: "#refunds"
        answerers: [alice]
  refund:
    depends_on: [ask]
    steps:
      - name: refund
        run: echo "refunded order 1042, approved by \${{ steps.ask.output.answered_by }}"
`;

describe('approvals in Slack on a cluster', () => {
  let cluster: Cluster;
  let operator: Operator;
  let chat: ChatService;

  beforeAll(async () => {
    chat = await startChatService();
    cluster = await startCluster('team-chat');
    operator = await cluster.startLeader('op-chat', {
      chat: { slack: { botToken: 'xoxb-test', signingSecret: SECRET, apiUrl: chat.slackApi }, publicUrl: 'https://spool.example.com', people: { U0ALICE: 'alice', U0BOB: 'bob' } },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    chat?.close();
    removeTempDirs();
  });

  it('given a Run whose gate notifies a channel, then the leader posts it once; a forged click and one from a person not allowed change nothing; alice’s Approve on the operator’s port finishes the Run and the message says so', async () => {
    const kubelet = startKubelet(cluster, operator.url);
    try {
      await givenWorkflow(cluster, 'refund', 'refund.yaml', REFUND);
      await whenRunCreated(cluster, 'refund-1', 'refund');
      const [posted] = await eventually('the gate’s message', () => Promise.resolve(chat.callsTo('POST /api/chat.postMessage', 0).length > 0 && chat.callsTo('POST /api/chat.postMessage', 0)), 60_000);
      expect(posted?.auth).toBe('Bearer xoxb-test');
      expect(posted?.body.channel).toBe('#refunds');
      expect(String(posted?.body.text)).toContain('Refund order 1042, EUR 480?');
      const value = approveValue(posted);
      const runId = (JSON.parse(value) as { run: string }).run;
      expect(runId).toMatch(/^k8s:team-chat:/);

      expect(await slackClick(operator.url, 'U0ALICE', 'approve', value, 'not-the-secret')).toBe(401);
      expect(await slackClick(operator.url, 'U0BOB', 'approve', value, SECRET)).toBe(200);
      expect(String(chat.callsTo('POST /api/chat.postEphemeral', 0).at(-1)?.body.text)).toContain('You (bob) may not answer this approval; alice may.');
      // A few of the leader's one-second looks later: still one message, and the gate still waits.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(chat.callsTo('POST /api/chat.postMessage', 0)).toHaveLength(1);
      expect((await operator.store.getRun(runId))?.status).toBe('waiting');

      expect(await slackClick(operator.url, 'U0ALICE', 'approve', value, SECRET)).toBe(200);
      await untilPhase('run refund-1', () => getRun(cluster, 'refund-1'), 'Succeeded', 90_000);
      const [updated] = await eventually('the message updated', () => Promise.resolve(chat.callsTo('POST /api/chat.update', 0).length > 0 && chat.callsTo('POST /api/chat.update', 0)));
      expect(JSON.stringify(updated?.body.blocks)).toContain('Approved by alice.');
      expect(JSON.stringify(updated?.body.blocks)).not.toContain('"actions"');
    } finally {
      await kubelet.stop();
    }
  }, 180_000);
});
