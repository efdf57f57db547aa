import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { resetConnection } from '../src/connection.js';
import * as sdk from '../src/index.js';
import { FakeAgent, type Exchange } from './fake-agent.js';

/** What the vectors cannot show: the connection's life, the capability cache, the real suspension. */

const INFO: Exchange = {
  request: { verb: 'agent.info' },
  reply: { status: 'ok', stdout: '{"protocol":2,"verbs":["wait.signal","wait.event","state.add","activity.wait"]}\n', exitCode: 0 },
};
const OK = { status: 'ok', exitCode: 0 };
const saved = { ...process.env };

afterEach(async () => {
  await resetConnection();
  for (const name of ['SPOOL_SOCKET', 'SPOOL_CONNECT_ATTEMPTS', 'SPOOL_CONNECT_BACKOFF_MS']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

async function using(exchanges: Exchange[], listen = true): Promise<FakeAgent> {
  const agent = await FakeAgent.start(exchanges, listen);
  process.env.SPOOL_SOCKET = agent.path;
  await resetConnection();
  return agent;
}

describe('the connection', () => {
  it('given no SPOOL_SOCKET, then a call is AgentUnavailable saying where durable calls run', async () => {
    delete process.env.SPOOL_SOCKET;
    await resetConnection();
    const error = await sdk.annotate('x').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(sdk.AgentUnavailable);
    expect((error as Error).message).toBe(
      'SPOOL_SOCKET is not set: durable calls run inside a script started by spool run, spool submit or a cluster run',
    );
  });

  it('given an agent that starts listening late, then connecting is retried with backoff and the call goes through once', async () => {
    const agent = await using([{ request: { verb: 'annotate', text: 'late' }, reply: OK }], false);
    process.env.SPOOL_CONNECT_ATTEMPTS = '8';
    process.env.SPOOL_CONNECT_BACKOFF_MS = '20';
    setTimeout(() => void agent.listen(), 150);
    await sdk.annotate('late');
    await resetConnection();
    await agent.drained();
    expect(agent.received).toHaveLength(1);
    await agent.close();
  });

  it('given SPOOL_CONNECT_ATTEMPTS=2 and no agent, then the call is AgentUnavailable after two tries', async () => {
    const agent = await using([], false);
    process.env.SPOOL_CONNECT_ATTEMPTS = '2';
    process.env.SPOOL_CONNECT_BACKOFF_MS = '1';
    await expect(sdk.annotate('x')).rejects.toThrow(/cannot reach the agent at .* after 2 attempts/);
    await agent.close();
  });

  it('given several calls, then they share one connection and agent.info is asked once', async () => {
    const wait = (name: string): Exchange => ({
      request: { verb: 'wait.signal', name, timeoutMs: 5 },
      reply: { status: 'ok', stdout: `${name}\n`, exitCode: 0 },
    });
    const agent = await using([INFO, wait('a'), wait('b'), { request: { verb: 'state.add', key: 'k' }, reply: OK }]);
    expect(await sdk.waitSignal('a', { timeoutMs: 5 })).toBe('a');
    expect(await sdk.waitSignal('b', { timeoutMs: 5 })).toBe('b');
    expect(await sdk.stateAdd('k')).toBe(true);
    await resetConnection();
    await agent.drained();
    expect(agent.problems).toEqual([]);
    expect(agent.connections).toBe(1);
    await agent.close();
  });

  it('given the agent went away, then later calls are AgentUnavailable too and nothing reconnects', async () => {
    const agent = await using([{ request: { verb: 'annotate', text: 'a' }, reply: null }]);
    await expect(sdk.annotate('a')).rejects.toBeInstanceOf(sdk.AgentUnavailable);
    await expect(sdk.annotate('b')).rejects.toBeInstanceOf(sdk.AgentUnavailable);
    expect(agent.connections).toBe(1);
    expect(agent.received).toEqual([{ verb: 'annotate', text: 'a' }]);
    await agent.close();
  });

  it('given a stepFn whose function makes durable calls, then they go out between execute and done', async () => {
    const agent = await using([
      { request: { verb: 'step_fn', name: 'outer' }, reply: { status: 'execute', position: 0 } },
      { request: { verb: 'state.get', key: 'n' }, reply: { status: 'ok', stdout: '4\n', exitCode: 0 } },
      { request: { verb: 'done', position: 0, value: 5 }, reply: OK },
    ]);
    expect(await sdk.stepFn('outer', async () => Number(await sdk.stateGet('n')) + 1)).toBe(5);
    await resetConnection();
    await agent.drained();
    expect(agent.problems).toEqual([]);
    await agent.close();
  });

  it('given arguments the SDK can tell are wrong, then it refuses them before sending anything', async () => {
    const agent = await using([]);
    await expect(sdk.step('s', 'make release' as unknown as string[])).rejects.toMatchObject({ code: 'script_error', kind: 'usage' });
    await expect(sdk.sleep(-1)).rejects.toMatchObject({ kind: 'usage' });
    await expect(sdk.activitySubmit('a', ['true'], { retries: 1.5 })).rejects.toMatchObject({ kind: 'usage' });
    await expect(sdk.stateSet('k', { at: 1n })).rejects.toThrow("state_set 'k': the value is not JSON (a bigint at $.at)");
    await expect(sdk.spawn('script', 'x', { name: 'child.yaml' })).rejects.toMatchObject({ kind: 'usage' });
    expect(agent.connections).toBe(0);
    await agent.close();
  });
});

/** Runs a script importing the built SDK against the agent, until it exits or `ms` pass. */
function script(agent: FakeAgent, body: string, ms: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const source = `import * as sdk from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};\n${body}`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      env: { ...process.env, SPOOL_SOCKET: agent.path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('a script process (the built SDK)', () => {
  it('given its calls are answered, then it exits by itself although the connection stays open', async () => {
    const agent = await FakeAgent.start([{ request: { verb: 'annotate', text: 'hi' }, reply: OK }]);
    const started = Date.now();
    const { code, stdout } = await script(agent, `await sdk.annotate('hi'); console.log('done');`, 20_000);
    expect(code).toBe(0);
    expect(stdout).toBe('done\n');
    expect(Date.now() - started).toBeLessThan(10_000);
    await agent.close();
  });

  it('given a suspended answer, then it says so on stderr and neither returns nor throws until it is ended', async () => {
    const agent = await FakeAgent.start([
      { request: { verb: 'sleep', ms: 1000 }, reply: { status: 'suspended', message: 'script suspended awaiting timer 2030-01-01T00:00:01.000Z' } },
    ]);
    const { code, stdout, stderr } = await script(
      agent,
      `try { await sdk.sleep(1000); console.log('returned'); } catch (error) { console.log('caught', error); }
console.log('past the sleep');`,
      1500,
    );
    expect(stderr).toBe('spool: script suspended awaiting timer 2030-01-01T00:00:01.000Z\n');
    expect(stdout).toBe('');
    expect(code).toBeNull(); // still blocked when the test killed it
    await agent.close();
  });

  it('given calls awaited together that are all answered suspended, then one line says so, not one per call', async () => {
    const suspended = { status: 'suspended', message: 'script suspended awaiting timer 2030-01-01T00:00:01.000Z' };
    const agent = await FakeAgent.start([
      { request: { verb: 'sleep', ms: 1000 }, reply: suspended },
      { request: { verb: 'sleep', ms: 1000 }, reply: suspended },
      { request: { verb: 'sleep', ms: 1000 }, reply: suspended },
    ]);
    const { code, stdout, stderr } = await script(
      agent,
      `await Promise.all([sdk.sleep(1000), sdk.sleep(1000), sdk.sleep(1000)]);
console.log('past the sleeps');`,
      1500,
    );
    expect(agent.received).toHaveLength(3);
    expect(stderr).toBe('spool: script suspended awaiting timer 2030-01-01T00:00:01.000Z\n');
    expect(stdout).toBe('');
    expect(code).toBeNull();
    await agent.close();
  });
});
