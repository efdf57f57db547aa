import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunShape } from '../../src/api/responses.js';
import { startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import { until, waitForChild, type Dev } from '../pipeline-run/pipeline-support.js';

/** `GET /v1/runs/:id/shape`: a pipeline's jobs or a graph's nodes with their states, as the run page's Shape draws them (issue 33, item 10). */

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

async function shapeOf(id: string): Promise<{ status: number; json: RunShape & { error?: { code: string } } }> {
  const response = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/shape`);
  return { status: response.status, json: (await response.json()) as RunShape & { error?: { code: string } } };
}

/** Each vertex as `name state`, with a fan_out's items and whether it names a child run. */
const summary = (shape: RunShape) =>
  Object.fromEntries(shape.vertices.map((vertex) => [vertex.name, { state: vertex.state, items: vertex.items, child: vertex.runId !== null, dependsOn: vertex.dependsOn }]));

describe('the shape of a pipeline run', () => {
  it('given a fan_out with a failing item, then it is failed with its items counted, the job below it skipped, a job whose if is false skipped, and each ran job names its child run', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'shape.yaml': [
        'name: shape',
        'jobs:',
        '  build:',
        '    steps: [{ name: b, run: echo built }]',
        '  fan:',
        '    depends_on: [build]',
        '    fan_out:',
        '      items: [1, 2, 3]',
        '      steps: [{ name: each, run: \'test "${{ item }}" != 2\' }]',
        '  after:',
        '    depends_on: [fan]',
        '    steps: [{ name: a, run: echo after }]',
        '  never:',
        '    depends_on: [build]',
        "    if: ${{ input == 'go' }}",
        '    steps: [{ name: n, run: echo never }]',
        '',
      ].join('\n'),
    });
    const id = await submit(dev.url, dir, 'shape.yaml');
    expect((await waitForRun(dev.url, id)).status).toBe('failed');
    const { status, json } = await shapeOf(id);
    expect(status).toBe(200);
    expect(json.kind).toBe('pipeline');
    expect(summary(json)).toEqual({
      build: { state: 'succeeded', items: null, child: true, dependsOn: [] },
      fan: { state: 'failed', items: { total: 3, started: 3, done: 2, failed: 1 }, child: false, dependsOn: ['build'] },
      after: { state: 'skipped', items: null, child: false, dependsOn: ['fan'] },
      never: { state: 'skipped', items: null, child: false, dependsOn: ['build'] },
    });
    const build = json.vertices.find((vertex) => vertex.name === 'build');
    const child = (await (await fetch(`${dev.url}/v1/runs/${encodeURIComponent(build?.runId ?? '')}`)).json()) as { run: { workflow: string; parentId: string } };
    expect(child.run).toMatchObject({ workflow: 'shape.yaml#build', parentId: id });
  });

  it('given a run waiting at a gate, then the gate is running with its child run and the job after it waiting', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'gate.yaml': ['name: gate', 'jobs:', '  ask:', '    approval: { prompt: "Ship?" }', '  ship:', '    depends_on: [ask]', '    steps: [{ name: s, run: echo shipped }]', ''].join('\n'),
    });
    const id = await submit(dev.url, dir, 'gate.yaml');
    const gate = await waitForChild(dev, id, 'ask', ['waiting']);
    const { json } = await shapeOf(id);
    expect(json.vertices).toEqual([
      { name: 'ask', dependsOn: [], state: 'running', runId: gate.id, items: null },
      { name: 'ship', dependsOn: ['ask'], state: 'waiting', runId: null, items: null },
    ]);
  });
});

describe('the shape of a pipeline run retrying a job', () => {
  it('given a job whose first attempt failed and whose retry waits, then it is running, not failed, and names the failed attempt', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'flaky.yaml': ['name: flaky', 'jobs:', '  try:', '    retry: { attempts: 2, backoff: 1h }', '    steps: [{ name: t, run: exit 1 }]', ''].join('\n'),
    });
    const id = await submit(dev.url, dir, 'flaky.yaml');
    const attempt = await waitForChild(dev, id, 'try', ['failed']);
    await until('the retry to wait for its backoff', async () => (await dev.store.getRun(id))?.wait?.kind === 'timer');
    const { json } = await shapeOf(id);
    expect(json.vertices).toEqual([{ name: 'try', dependsOn: [], state: 'running', runId: attempt.id, items: null }]);
  });
});

describe('the shape of a graph run', () => {
  it('given an http fan_out with a failing item and a wait node, then the wait is running, what follows it waiting, and after the signal both succeeded', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'g.json': JSON.stringify({
        nodes: [
          { id: 'hello', type: 'script', config: { interpreter: 'bash', body: 'echo hello' } },
          {
            id: 'fan',
            type: 'http',
            depends_on: ['hello'],
            fan_out: { items: [`${dev.url}/v1/workflows`, `${dev.url}/v1/runs/dev:nope:run-0000000000000000`] },
            config: { method: 'GET', url: { $expr: 'item' } },
          },
          { id: 'after', type: 'script', depends_on: ['fan'], config: { interpreter: 'bash', body: 'echo after' } },
          { id: 'hold', type: 'wait', depends_on: ['hello'], config: { signal: 'go', timeout: '1h' } },
          { id: 'last', type: 'script', depends_on: ['hold'], config: { interpreter: 'bash', body: 'echo last' } },
        ],
      }),
    });
    const id = await submit(dev.url, dir, 'g.json');
    await until('the graph to wait for its signal', async () => (await dev.store.getRun(id))?.wait?.kind === 'signal');
    const waiting = (await shapeOf(id)).json;
    expect(waiting.kind).toBe('graph');
    expect(summary(waiting)).toEqual({
      hello: { state: 'succeeded', items: null, child: true, dependsOn: [] },
      fan: { state: 'failed', items: { total: 2, started: 2, done: 1, failed: 1 }, child: false, dependsOn: ['hello'] },
      after: { state: 'skipped', items: null, child: false, dependsOn: ['fan'] },
      hold: { state: 'running', items: null, child: false, dependsOn: ['hello'] },
      last: { state: 'waiting', items: null, child: false, dependsOn: ['hold'] },
    });

    const sent = await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'go' }),
    });
    expect(sent.status).toBe(202);
    expect((await waitForRun(dev.url, id)).status).toBe('failed');
    const ended = summary((await shapeOf(id)).json);
    expect([ended.hold?.state, ended.last?.state, ended.last?.child]).toEqual(['succeeded', 'succeeded', true]);
  });
});

describe('the shape of a graph run cancelled in a sleep', () => {
  it('given a sleep node under way, then it is running, and unknown once the run is cancelled (it leaves no trace of its own)', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'nap.json': JSON.stringify({ nodes: [{ id: 'nap', type: 'sleep', config: { duration: '1h' } }] }) });
    const id = await submit(dev.url, dir, 'nap.json');
    await until('the graph to sleep', async () => (await dev.store.getRun(id))?.wait?.kind === 'timer');
    expect((await shapeOf(id)).json.vertices.map((vertex) => vertex.state)).toEqual(['running']);
    await fetch(`${dev.url}/v1/runs/${encodeURIComponent(id)}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await waitForRun(dev.url, id)).status).toBe('cancelled');
    expect((await shapeOf(id)).json.vertices.map((vertex) => vertex.state)).toEqual(['unknown']);
  });
});

describe('runs without a shape', () => {
  it('given a pipeline run whose document this version no longer reads, then kind pipeline with no vertices, not an error that would blank the run page', async () => {
    // Made in the store, as a run recorded by an older version: its script is no pipeline this one accepts.
    const id = `dev:default:run-${'b'.repeat(16)}`;
    await dev.store.createRun({ id, project: 'default', workflow: 'old.yaml', interpreter: 'pipeline', script: 'name: old\njobs:\n  a:\n    stages: []\n' });
    expect(await shapeOf(id)).toEqual({ status: 200, json: { kind: 'pipeline', vertices: [] } });
  });


  it('given a script run, then kind is null and there are no vertices; given no such run, then 404 not_found', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'plain.sh': 'spool step one -- echo one\n' });
    const id = await submit(dev.url, dir, 'plain.sh');
    await waitForRun(dev.url, id);
    expect(await shapeOf(id)).toEqual({ status: 200, json: { kind: null, vertices: [] } });
    const missing = await shapeOf('dev:default:run-0000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.json.error?.code).toBe('not_found');
  });
});
