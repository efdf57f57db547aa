import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userInfo } from 'node:os';
import { cli, cliOk, getRun, startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';
import { startKeyServer } from './key-server.js';

let dev: Dev;
let server: Awaited<ReturnType<typeof startKeyServer>>;

beforeAll(async () => {
  dev = await startDev();
  server = await startKeyServer();
}, 60_000);

afterAll(async () => {
  await server?.close();
  await dev?.close();
  removeTempDirs();
});

describe('a graph on spool dev', () => {
  it('given an approval node before the charge, when approved with spool approve, then the charge is sent once and the run succeeds with the gate\'s outputs', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'pay.json': JSON.stringify({
        nodes: [
          { id: 'ask', type: 'approval', config: { prompt: 'Charge order 1042?', timeout: '1h' } },
          {
            id: 'charge',
            type: 'http',
            depends_on: ['ask'],
            if: 'nodes.ask.output.approved',
            config: { method: 'POST', url: `${server.url}/dev-charges`, headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } },
          },
        ],
        outputs: { approved: { $expr: 'nodes.ask.output.approved' }, status: { $expr: 'nodes.charge.output.status' } },
      }),
    });
    const runId = await submit(dev.url, dir, 'pay.json');
    const gate = await waitForChild(dev, runId, 'ask', ['waiting']);
    expect(gate.workflow).toBe('pay.json#ask');
    expect(server.keys('/dev-charges').size).toBe(0);
    expect(await cliOk(dev.url, dir, ['approve', runId, 'ask'])).toBe(`approved ask of ${runId}\n`);

    await waitForRun(dev.url, runId);
    const run = await getRun(dev.url, runId);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.interpreter).toBe('graph');
    expect(run.outputs).toEqual({ approved: 'true', status: '200' });
    expect([...server.keys('/dev-charges').values()]).toEqual([1]);
  });

  it('given an approval node with approvers, then the gate lists them and refuses someone it does not name, in one line (issue 33, item 11)', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'ship.json': JSON.stringify({ nodes: [{ id: 'ask', type: 'approval', config: { prompt: 'Ship?', timeout: '1h', approvers: { count: 2, from: ['alice', 'bob'] } } }] }) });
    const runId = await submit(dev.url, dir, 'ship.json');
    await waitForChild(dev, runId, 'ask', ['waiting']);
    const { approvals } = (await (await fetch(`${dev.url}/v1/runs/${encodeURIComponent(runId)}/approvals`)).json()) as { approvals: { approvers: unknown }[] };
    expect(approvals[0]?.approvers).toEqual({ count: 2, from: ['alice', 'bob'] });
    const refused = await cli(dev.url, dir, ['reject', runId, 'ask']);
    expect(refused.output).toBe(`spool: ${userInfo().username} may not answer the approval 'ask': it asks alice, bob\n`);
    expect(refused.code).not.toBe(0);
    expect((await getRun(dev.url, runId)).status).toBe('waiting');
  });

  it('given a malformed graph posted to the API, then 422 invalid_pipeline with its line and column, and no run is made', async () => {
    const count = async () => ((await (await fetch(`${dev.url}/v1/runs?limit=1000`)).json()) as { runs: unknown[] }).runs.length;
    const before = await count();
    const response = await fetch(`${dev.url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'bad.json', interpreter: 'graph', script: '{ "nodes": [{ "id": "a", "type": "smtp", "config": {} }] }\n' }),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({
      error: { code: 'invalid_pipeline', message: "bad.json:1:34: 'type' must be one of http, script, call, approval, wait, sleep" },
    });
    expect(await count()).toBe(before);
  });

  it('given a graph run on spool dev, when it is rerun with spool rerun, then the rerun sends its charge with a new key, each key once', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'charge.json': JSON.stringify({
        nodes: [{ id: 'charge', type: 'http', config: { method: 'POST', url: `${server.url}/rerun-charges`, headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } } }],
      }),
    });
    const first = await submit(dev.url, dir, 'charge.json');
    expect((await waitForRun(dev.url, first)).status).toBe('succeeded');
    const again = (await cliOk(dev.url, dir, ['rerun', first])).trim();
    expect(again).not.toBe(first);
    expect((await waitForRun(dev.url, again)).status).toBe('succeeded');
    const keys = server.keys('/rerun-charges');
    expect(keys.size).toBe(2);
    expect([...keys.values()]).toEqual([1, 1]);
  });
});
