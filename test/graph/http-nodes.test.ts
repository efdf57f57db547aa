import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, startSpool, tempDir, waitFor, withStore, writeFiles } from '../support/spool.js';
import { startKeyServer } from './key-server.js';

let server: Awaited<ReturnType<typeof startKeyServer>>;
beforeAll(async () => {
  server = await startKeyServer();
});
afterAll(async () => {
  await server.close();
  removeTempDirs();
});

/** The seed's charge node (docs/graphs.md), verbatim but for the URL; `extra` adds node keys beside it. */
const charge = (url: string, extra = '') => `{ "id": "charge", "type": "http",${extra}
  "config": { "method": "POST", "url": "${url}",
              "headers": { "Idempotency-Key": { "$expr": "node.idempotency_key" } } } }`;

const KEY = /^spool-[0-9a-f]{32}$/;

/** Runs a graph document with `spool run` in a fresh directory (and data dir, unless given one). */
async function runGraph(document: string, dataDir = join(tempDir(), 'data'), ...extra: string[]) {
  const dir = tempDir();
  writeFiles(dir, { 'graph.json': document });
  const result = await spool(['run', 'graph.json', '--data-dir', dataDir, ...extra], { cwd: dir });
  const id = runIdOf(result.output);
  return { ...result, id, dataDir, ...(await recorded(dataDir, id)) };
}

describe("a graph's http node and node.idempotency_key", () => {
  it('given the charge node answered 503 once, when it retries, then both requests carry one key', async () => {
    const { code, output, run } = await runGraph(`{ "nodes": [ ${charge(`${server.url}/retried?fail=1`, ' "retry": { "attempts": 3, "backoff": "50ms" },')} ],
      "outputs": { "seen": { "$expr": "nodes.charge.output.body.seen" } } }`);
    expect(code, output).toBe(0);
    const keys = server.keys('/retried');
    expect([...keys.values()]).toEqual([2]);
    expect([...keys.keys()][0]).toMatch(KEY);
    expect(run?.outputs).toEqual({ seen: '2' });
  });

  it('given the run suspended after the charge (a sleep node), when it replays, then the charge is not sent again and its recorded output, key and all, is what the next node reads', async () => {
    const { code, output, id, dataDir, run, journal } = await runGraph(`{ "nodes": [
      ${charge(`${server.url}/replayed`)},
      { "id": "pause", "type": "sleep", "depends_on": ["charge"], "config": { "duration": "1s" } },
      { "id": "receipt", "type": "http", "depends_on": ["pause"],
        "config": { "method": "POST", "url": "${server.url}/receipts", "body": { "charged": { "$expr": "nodes.charge.output.body.key" } },
                    "headers": { "Idempotency-Key": { "$expr": "node.idempotency_key" } } } } ],
      "outputs": { "charged_key": { "$expr": "nodes.charge.output.body.key" } } }`);
    expect(code, output).toBe(0);
    const charges = server.keys('/replayed');
    expect([...charges.values()]).toEqual([1]);
    const [chargeKey] = [...charges.keys()];
    expect(chargeKey).toMatch(KEY);
    expect(run?.outputs).toEqual({ charged_key: chargeKey });
    const receipts = server.received.filter((entry) => entry.path === '/receipts' && entry.body.includes(String(chargeKey)));
    expect(receipts).toHaveLength(1);
    expect(receipts[0]?.key).toMatch(KEY);
    expect(receipts[0]?.key).not.toBe(chargeKey);
    expect(callsOf(journal)).toEqual(['step_fn node charge', 'sleep', 'step_fn node receipt', 'output.set charged_key']);
    // The receipt was sent by a later pass than the charge: the charge was replayed in between.
    const times = await withStore(dataDir, (store) => store.readJournalTimes(id));
    const passOf = (position: number) => times.find((time) => time.position === position && time.kind === 'call')?.pass;
    expect(passOf(2)).toBeGreaterThan(passOf(0) ?? Infinity);
  });

  it('given the pass was SIGKILLed while the charge was under way, when resumed, then the charge is sent again with the same key', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, { 'graph.json': `{ "nodes": [ ${charge(`${server.url}/killed?hold=1`)} ] }` });
    const runner = startSpool(['run', 'graph.json', '--data-dir', dataDir], { cwd: dir });
    await waitFor('the charge to reach the server', () => server.keys('/killed').size > 0);
    process.kill(runner.pid, 'SIGKILL');
    const killed = await runner.done;
    expect(killed.signal).toBe('SIGKILL');
    const id = runIdOf(killed.output);

    const resumed = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });
    expect(resumed.code, resumed.output).toBe(0);
    const keys = server.keys('/killed');
    expect([...keys.values()]).toEqual([2]);
    expect([...keys.keys()][0]).toMatch(KEY);
    expect((await recorded(dataDir, id)).run?.status).toBe('succeeded');
  });

  it('given a fan_out over ten items, then ten requests go out with ten distinct keys', async () => {
    const { code, output } = await runGraph(`{ "nodes": [ { "id": "notify", "type": "http",
      "fan_out": { "items": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
      "config": { "method": "POST", "url": "${server.url}/notify", "body": { "$expr": "item" },
                  "headers": { "Idempotency-Key": { "$expr": "node.idempotency_key" } } } } ] }`);
    expect(code, output).toBe(0);
    const keys = server.keys('/notify');
    expect(keys.size).toBe(10);
    expect([...keys.values()].every((count) => count === 1)).toBe(true);
    expect([...keys.keys()].every((key) => KEY.test(String(key)))).toBe(true);
  });

  it('given the same document run again (there is no rerun verb: a new run), then the charge carries a new key', async () => {
    const dataDir = join(tempDir(), 'data');
    const document = `{ "nodes": [ ${charge(`${server.url}/again`)} ] }`;
    expect((await runGraph(document, dataDir)).code).toBe(0);
    expect((await runGraph(document, dataDir)).code).toBe(0);
    const keys = server.keys('/again');
    expect(keys.size).toBe(2);
    expect([...keys.values()]).toEqual([1, 1]);
  });

  it('given a 404, then the node fails at once, without retrying, and the run fails saying why', async () => {
    const { code, output, run } = await runGraph(`{ "nodes": [ { "id": "get", "type": "http", "retry": 3, "config": { "url": "${server.url}/missing?fail=0" } },
      { "id": "after", "type": "sleep", "depends_on": ["get"], "config": { "duration": "1ms" } } ] }`);
    expect(code).not.toBe(0);
    expect(output).toContain('after: skipped (a node it depends on failed)');
    expect(run?.error).toBe(`node get failed: GET ${server.url}/missing?fail=0 answered 404`);
  });

  it('given a response over the recorded-result limit, then the node fails saying so, and nothing of it is recorded', async () => {
    const { code, run, journal } = await runGraph(
      `{ "nodes": [ { "id": "big", "type": "http", "config": { "url": "${server.url}/big?size=5000" } } ] }`,
      join(tempDir(), 'data'),
      '--max-result-bytes',
      '2000',
    );
    expect(code).toBe(1);
    expect(run?.error).toMatch(/^node big failed: the response is \d+ bytes recorded, over the limit of 2000 \(SPOOL_MAX_RESULT_BYTES\)$/);
    const result = journal.find((entry) => entry.kind === 'result');
    expect(JSON.stringify(result?.data)).not.toContain('xxxx');
  });
});
