import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { servePodAgent } from '../../src/agent/remote/pod-agent.js';
import type { Assignment } from '../../src/agent/remote/warm-assignment.js';
import { removeTempDirs, startSpool, tempDir } from '../support/spool.js';
import { askSocket, askSocketWhenListening } from '../support/socket-line.js';

const SPEC = { run: 'k8s:team:run-1', pass: 3, filename: 'hot.sh', interpreter: 'bash', script: 'echo hot\n', input: { run: 'k8s:team:run-1' } };

/**
 * A warm pod's agent asks for its pass only once its runner (`spool pass`, the script container)
 * asks for the script: a pod whose script container is not up yet takes no pass, and a pass that
 * takes one starts at once. The script comes with the assignment, so the runner has it without
 * another request (and the operator without another TokenReview).
 */
describe('a warm pod agent', () => {
  let server: Server | undefined;
  let agent: { close(): Promise<void> } | undefined;

  afterEach(async () => {
    await agent?.close();
    agent = undefined;
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });
  afterAll(removeTempDirs);

  /**
   * The operator's agent routes, recording every request: the assignment answered as `assignment`
   * says, the pass's script (GET of the pass) as `pass` says, anything else 404.
   */
  async function givenOperator(
    assignment: [number, unknown] = [200, { assignment: { run: SPEC.run, pass: SPEC.pass, spec: SPEC } }],
    pass: [number, unknown] = [404, { error: { message: 'not here' } }],
  ): Promise<{ url: string; asked: string[] }> {
    const asked: string[] = [];
    server = createServer((request, response) => {
      asked.push(`${request.method} ${request.url} ${request.headers.authorization}`);
      const [code, answer] = request.url === '/v1/agent/assignment' ? assignment : request.url?.startsWith('/v1/agent/runs/') ? pass : [404, { error: { message: 'not here' } }];
      response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, asked };
  }

  it("given an agent serving its sockets, then its pass is asked for only when the runner asks for the script, and the assignment's script is the runner's answer with no request for it", async () => {
    const dir = tempDir('warm-agent-');
    writeFileSync(join(dir, 'token'), 'warm-token\n');
    const operator = await givenOperator();
    const asks: string[] = [];
    const assignment = (): Promise<Assignment> => {
      asks.push('assignment');
      return Promise.resolve({ runId: SPEC.run, pass: SPEC.pass, spec: SPEC });
    };
    const [socket, control] = [join(dir, 'spool.sock'), join(dir, 'control.sock')];
    agent = await servePodAgent({ server: operator.url, tokenFile: join(dir, 'token'), socket, control, assignment });
    // Listening, with no runner yet (its container not started): no pass asked for.
    expect(asks).toEqual([]);
    expect(await askSocket(control, { verb: 'spec' })).toEqual({ spec: SPEC });
    expect(asks).toEqual(['assignment']);
    expect(operator.asked).toEqual([]);
  });

  it('given `spool agent --warm` as the pool’s Job runs it, then the runner’s ask for the script is answered from one GET /v1/agent/assignment', async () => {
    const dir = tempDir('warm-agent-');
    writeFileSync(join(dir, 'token'), 'warm-token\n');
    const operator = await givenOperator();
    const [socket, control] = [join(dir, 'spool.sock'), join(dir, 'control.sock')];
    const process_ = startSpool(['agent', '--socket', socket, '--control', control, '--warm'], { cwd: dir, env: { SPOOL_SERVER: operator.url, SPOOL_TOKEN_FILE: join(dir, 'token') } });
    expect(await askSocketWhenListening(control, { verb: 'spec' })).toEqual({ spec: SPEC });
    expect(operator.asked).toEqual(['GET /v1/agent/assignment Bearer warm-token']);
    process.kill(process_.pid, 'SIGTERM');
    const ended = await process_.done;
    expect(ended.code, ended.output).toBe(0);
  });

  it('given an assignment without its script (the pass hosted by another replica, or over: an answer lost and asked for late), then the script is asked for as a cold pass asks, and a 409 there is the runner\'s answer', async () => {
    const dir = tempDir('warm-agent-');
    writeFileSync(join(dir, 'token'), 'warm-token\n');
    const ended = 'pass 3 of run k8s:team:run-1 is not under way here; its script must stop';
    const operator = await givenOperator([200, { assignment: { run: SPEC.run, pass: SPEC.pass } }], [409, { error: { code: 'pass_ended', message: ended } }]);
    const [socket, control] = [join(dir, 'spool.sock'), join(dir, 'control.sock')];
    const process_ = startSpool(['agent', '--socket', socket, '--control', control, '--warm'], { cwd: dir, env: { SPOOL_SERVER: operator.url, SPOOL_TOKEN_FILE: join(dir, 'token') } });
    expect(await askSocketWhenListening(control, { verb: 'spec' })).toEqual({ error: ended });
    expect(operator.asked).toEqual(['GET /v1/agent/assignment Bearer warm-token', `GET /v1/agent/runs/${encodeURIComponent(SPEC.run)}/passes/3 Bearer warm-token`]);
    process.kill(process_.pid, 'SIGTERM');
    expect((await process_.done).code).toBe(0);
  });
});
