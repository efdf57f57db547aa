// A replica that does not lead passes an agent's call on to the leader of its run's shard (src/operator/forward-to-leader.ts),
// here between two real HTTP servers on loopback: the follower's express route and a leader.
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardToLeader, shardOfAgentCall } from '../../src/operator/forward-to-leader.js';
import { shardOfRun } from '../../src/store/run-shards.js';
import { cutOffReusedConnections } from '../support/reused-connections.js';

describe('forwardToLeader', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  };

  /** A replica that does not lead, forwarding /v1/agent to `leader` (NAME@URL, as the Lease holds it). */
  const givenFollower = (leader: string | undefined): Promise<string> => {
    const app = express();
    app.use('/v1/agent', (req, res) => void forwardToLeader(leader, req, res));
    return listen(createServer(app));
  };

  /** The leader: answers each request with what reached it; with `closesReused`, it cuts off reused connections. */
  const givenLeader = ({ closesReused = false } = {}): Promise<string> => {
    const cutOff = cutOffReusedConnections();
    return listen(
      createServer((request, response) => {
        if (closesReused && cutOff(request)) return;
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const heard = { method: request.method, url: request.url, authorization: request.headers.authorization, body };
          response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(heard));
        });
      }),
    );
  };

  const post = (url: string, body: unknown): Promise<globalThis.Response> =>
    fetch(url, { method: 'POST', headers: { authorization: 'Bearer pod-token', 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it("given a leader, then the call reaches it with its path, token and body, and the leader's answer comes back as it is", async () => {
    const follower = await givenFollower(`op-0@${await givenLeader()}`);
    const answer = await post(`${follower}/v1/agent/runs/r1/passes/1/calls`, { verb: 'step', name: 'a' });
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({
      method: 'POST',
      url: '/v1/agent/runs/r1/passes/1/calls',
      authorization: 'Bearer pod-token',
      body: '{"verb":"step","name":"a"}',
    });
  });

  it('given a leader that cuts off requests on reused connections, then every call of a pass still reaches it: each has its own connection', async () => {
    const follower = await givenFollower(`op-0@${await givenLeader({ closesReused: true })}`);
    const statuses: number[] = [];
    for (let call = 1; call <= 5; call++) statuses.push((await post(`${follower}/v1/agent/runs/r1/passes/1/calls`, { verb: 'step', name: `s${call}` })).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
  });

  it('given two replicas that each see the other as the leader (a shard changing hands), then the call is forwarded once and answered 503, not passed back and forth', async () => {
    const heard: string[] = [];
    const app = express();
    let other = '';
    app.use('/v1/agent', (req, res) => {
      heard.push(req.originalUrl);
      void forwardToLeader(`op-1@${other}`, req, res);
    });
    const first = await listen(createServer(app));
    other = first;
    // A replica whose view of the leader is itself stands for two that see each other: the call it forwarded comes back, and goes no further.
    const answer = await post(`${first}/v1/agent/runs/r1/passes/1/calls`, {});
    expect(answer.status).toBe(503);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error).toEqual({ code: 'no_leader', message: `the replica this call was forwarded to does not lead it either (it sees ${first} as the leader); try again shortly` });
    expect(heard).toEqual(['/v1/agent/runs/r1/passes/1/calls', '/v1/agent/runs/r1/passes/1/calls']);
  });

  it('an agent\'s call goes to the leader of its run\'s shard; any other call, and every call with one shard, to shard 0\'s', () => {
    const run = 'k8s:team:run-0123456789abcdef';
    expect(shardOfAgentCall(`/runs/${encodeURIComponent(run)}/passes/2/calls`, 8)).toBe(shardOfRun(run, 8));
    expect(shardOfAgentCall(`/runs/${encodeURIComponent(run)}/passes/2/calls`, 1)).toBe(0);
    expect(shardOfAgentCall('/runs/%E0%A4%A/passes/1/calls', 8)).toBe(0);
    expect(shardOfAgentCall('/other', 8)).toBe(0);
    // The hash spreads runs: 64 ids fall in every one of 4 shards.
    expect(new Set(Array.from({ length: 64 }, (_, i) => shardOfAgentCall(`/runs/k8s%3Ateam%3Arun-${i}/exit`, 4))).size).toBe(4);
  });

  it('given no leader, then 503 no_leader says to try again shortly', async () => {
    const answer = await post(`${await givenFollower(undefined)}/v1/agent/runs/r1/passes/1/calls`, {});
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({ error: { code: 'no_leader', message: 'no operator replica leads right now; try again shortly' } });
  });

  it('given a leader that cannot be reached, then 503 no_leader names where it was looked for', async () => {
    const gone = await givenLeader();
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const answer = await post(`${await givenFollower(`op-0@${gone}`)}/v1/agent/runs/r1/passes/1/calls`, {});
    expect(answer.status).toBe(503);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('no_leader');
    expect(error.message).toContain(`the leader at ${gone} cannot be reached: `);
  });
});
