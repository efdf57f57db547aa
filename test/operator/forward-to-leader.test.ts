// A replica that does not lead passes an agent's call on to the leader (src/operator/forward-to-leader.ts),
// here between two real HTTP servers on loopback: the follower's express route and a leader.
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardToLeader } from '../../src/operator/forward-to-leader.js';
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
