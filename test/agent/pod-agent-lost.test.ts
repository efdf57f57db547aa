import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { servePodAgent } from '../../src/agent/remote/pod-agent.js';
import { cutOffReusedConnections } from '../support/reused-connections.js';
import { askSocket } from '../support/socket-line.js';

/**
 * A pass pod's agent whose operator cannot be reached mid-pass (its Service has no ready replica
 * while the database is away; a connection reset under load): the call the script made exits 69,
 * and the script's end that follows must not reach the operator as the run's end, or the run fails
 * for the network's sake. Unreported, the Job ends without word and the operator replays the run.
 */
describe('the pod agent when the operator cannot be reached', () => {
  let dir = '';
  let server: Server | undefined;
  let agent: { close(): Promise<void> } | undefined;

  afterEach(async () => {
    await agent?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    rmSync(dir, { recursive: true, force: true });
  });

  /** The operator's agent routes, with /calls answered by `call`; answers what reached /exit. */
  async function givenOperator(
    call: (respond: (status: number, body: unknown) => void, destroy: () => void) => void,
    { closesReused = false, port = 0 } = {},
  ): Promise<{ url: string; exits: unknown[]; calls: () => number }> {
    const exits: unknown[] = [];
    let calls = 0;
    const cutOff = cutOffReusedConnections();
    server = createServer((request, response) => {
      if (closesReused && cutOff(request)) return;
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const respond = (status: number, payload: unknown): void => {
          response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
        };
        if (request.url?.endsWith('/calls')) {
          calls += 1;
          return call(respond, () => request.socket.destroy());
        }
        if (request.url?.endsWith('/exit')) exits.push(JSON.parse(body));
        respond(200, {});
      });
    });
    await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    return { url: `http://127.0.0.1:${address.port}`, exits, calls: () => calls };
  }

  /** The agent of pass 1, a step call through its spool socket, then the script's end (69) through its control socket. */
  async function passWithOneCall(url: string, requestTimeoutMs?: number, retryForMs = 400): Promise<{ answer: Record<string, unknown>; ended: Record<string, unknown> }> {
    dir = mkdtempSync(join(tmpdir(), 'pod-agent-'));
    writeFileSync(join(dir, 'token'), 'token\n');
    const [socket, control] = [join(dir, 'spool.sock'), join(dir, 'control.sock')];
    agent = await servePodAgent({ server: url, assignment: () => Promise.resolve({ runId: 'run-1', pass: 1 }), tokenFile: join(dir, 'token'), socket, control, retryForMs, ...(requestTimeoutMs ? { requestTimeoutMs } : {}) });
    const answer = await askSocket(socket, { verb: 'step', name: 'a' });
    const ended = await askSocket(control, { verb: 'exit', code: answer.exitCode ?? 0, signal: null });
    return { answer, ended };
  }

  it('given a call whose connection is reset, then the script sees 69 and its end is not reported: the pass is lost, not failed', async () => {
    const operator = await givenOperator((_respond, destroy) => destroy());
    const { answer, ended } = await passWithOneCall(operator.url);
    expect(answer).toMatchObject({ status: 'error', kind: 'internal', exitCode: 69 });
    expect(ended).toEqual({ ok: true });
    expect(operator.exits).toEqual([]);
    // It may have been received, so it is not sent again: a call is never answered twice.
    expect(operator.calls()).toBe(1);
  });

  it('given an operator that refuses connections at first (its Service not ready yet), then the call is sent again once it listens, and the script gets its answer', async () => {
    const port = await freePort();
    let operator: Awaited<ReturnType<typeof givenOperator>> | undefined;
    const listening = new Promise<void>((resolve) =>
      setTimeout(() => void givenOperator((respond) => respond(200, { status: 'ok', stdout: 'a\n' }), { port }).then((started) => ((operator = started), resolve())), 150),
    );
    const { answer } = await passWithOneCall(`http://127.0.0.1:${port}`, undefined, 2_000);
    await listening;
    expect(answer).toMatchObject({ status: 'ok', stdout: 'a\n' });
    expect(operator?.calls()).toBe(1);
    expect(operator?.exits).toEqual([{ code: 0, signal: null }]);
  });

  it('given a call answered 503 until the agent stops retrying (the database away), then the end is not reported either', async () => {
    const operator = await givenOperator((respond) => respond(503, { error: { code: 'unavailable', message: 'the database does not answer' } }));
    const { answer } = await passWithOneCall(operator.url);
    expect(answer).toMatchObject({ status: 'error', exitCode: 69, message: 'the database does not answer' });
    expect(operator.exits).toEqual([]);
  });

  it('given a call the operator never answers (its database connection hangs), then the agent gives up on it: 69, and the pass is lost', async () => {
    const operator = await givenOperator(() => undefined);
    const { answer } = await passWithOneCall(operator.url, 500);
    expect(answer).toMatchObject({ status: 'error', exitCode: 69 });
    expect(operator.exits).toEqual([]);
  });

  it('given an operator that closes kept-alive connections as they are reused, then nothing is lost: each request has its own connection', async () => {
    const operator = await givenOperator((respond) => respond(200, { status: 'ok', stdout: 'a\n' }), { closesReused: true });
    const { answer } = await passWithOneCall(operator.url);
    expect(answer).toMatchObject({ status: 'ok', stdout: 'a\n' });
    expect(operator.exits).toEqual([{ code: 0, signal: null }]);
  });

  it('given a call the operator answers, then the script’s end is reported as it is', async () => {
    const operator = await givenOperator((respond) => respond(200, { status: 'error', kind: 'user', message: 'step a exited 3', exitCode: 3 }));
    const { answer } = await passWithOneCall(operator.url);
    expect(answer.exitCode).toBe(3);
    expect(operator.exits).toEqual([{ code: 3, signal: null }]);
  });
});

/** A loopback port nothing listens on (taken, then given back). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
