import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callsOf, readLines, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../../../test/support/spool.js';
import { requireBuiltSdk } from './scripts.js';

/**
 * The SDK against the real engine: `spool run` (the built CLI, an embedded store) runs a script
 * that imports the built SDK through every pass to the end; the journal is read from the store.
 */

beforeAll(requireBuiltSdk);
afterAll(removeTempDirs);

/** Every line the script logs goes to effects.txt, so a test sees what each pass did. */
const PRELUDE = `import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
const log = (line) => appendFileSync('effects.txt', line + '\\n');
`;

async function runScript(file: string, body: string): Promise<{ dir: string; dataDir: string; id: string; output: string; code: number | null }> {
  const dir = tempDir('spool-sdk-ts-');
  const dataDir = join(dir, 'data');
  writeFiles(dir, { [file]: PRELUDE + body });
  const { code, output } = await spool(['run', file, '--data-dir', dataDir], { cwd: dir });
  return { dir, dataDir, id: runIdOf(output), output, code };
}

describe('the TypeScript SDK under spool run', () => {
  it('given a stepFn before a sleep, then its function runs once, a replay gets the recorded value, and a function that throws records nothing and runs again', async () => {
    const { dir, dataDir, id, output, code } = await runScript(
      'charge.mjs',
      `import { sleep, stepFn } from '@hyperspool/sdk';
log('pass');
const receipt = await stepFn('charge', () => {
  log('charge ran');
  return { id: 'ch_1', at: new Date(Date.UTC(2030, 0, 1)), note: undefined };
});
log('receipt ' + JSON.stringify(receipt));
let settled = 'not yet';
try {
  settled = await stepFn('settle', () => {
    log('settle ran');
    if (!existsSync('card-ok')) throw new Error('card declined');
    return 'settled ' + receipt.id;
  });
} catch (error) {
  log('caught ' + error.constructor.name + ': ' + error.message);
  writeFileSync('card-ok', '');
}
await sleep(300);
log(settled);
`,
    );
    expect(output).toContain(`  ${id} succeeded`);
    expect(code).toBe(0);
    const effects = readLines(join(dir, 'effects.txt'));
    const receipt = { id: 'ch_1', at: '2030-01-01T00:00:00.000Z' };
    expect(effects.map((line) => (line.startsWith('receipt ') ? JSON.parse(line.slice(8)) : line) as unknown)).toEqual([
      'pass',
      'charge ran',
      receipt, // the first pass gets what JSON gives back too: the Date is its string already
      'settle ran',
      'caught Error: card declined',
      'pass',
      receipt, // the same value, its keys in the same order
      'settle ran',
      'settled ch_1',
    ]);
    const { run, journal } = await recorded(dataDir, id);
    expect(run?.passes).toBe(2);
    expect(callsOf(journal)).toEqual(['step_fn charge', 'step_fn settle', 'sleep']);
    const results = journal.filter((entry) => entry.kind === 'result');
    // settle's first attempt threw: only the second pass's value was recorded.
    // The store keeps a step_fn's value as JSON text (the journal API shows it as `value`).
    expect(results.map((entry) => [entry.position, typeof entry.data.json === 'string' ? { value: JSON.parse(entry.data.json) as unknown } : entry.data])).toEqual([
      [0, expect.objectContaining({ value: { id: 'ch_1', at: '2030-01-01T00:00:00.000Z' } })],
      [1, expect.objectContaining({ value: 'settled ch_1' })],
      [2, expect.anything()],
    ]);
  }, 120_000);

  it('given a bounded wait, a lock and a catch around a sleep, then the wait times out to null, the catch never runs, and a second lock is a ScriptError', async () => {
    const { dir, dataDir, id, output, code } = await runScript(
      'guarded.mjs',
      `import { lock, ScriptError, sleep, step, stateGet, stateSet, waitSignal } from '@hyperspool/sdk';
log('pass');
const answer = await waitSignal('approve', { timeoutMs: 1000 });
log('approve ' + JSON.stringify(answer));
await lock('deploy', async () => {
  const n = (await stateGet('deploys', { entity: 'sdk-ts' })) ?? 0;
  await stateSet('deploys', n + 1, { entity: 'sdk-ts' });
  log('locked body, deploys ' + (n + 1));
});
log('key ' + (await step('key', ['sh', '-c', 'echo "$SPOOL_IDEMPOTENCY_KEY"'])).trim().replace(/[0-9a-f]{32}/, 'X'));
try {
  await sleep(300);
} catch (error) {
  log('caught around sleep: ' + error.message);
}
log('past the sleep');
try {
  await lock('tally', () => log('second body ran'));
} catch (error) {
  log('refused ' + (error instanceof ScriptError) + ' ' + error.code + ' ' + error.kind + ': ' + error.message.split(' (')[0]);
}
`,
    );
    expect(output).toContain(`  ${id} succeeded`);
    expect(code).toBe(0);
    expect(readLines(join(dir, 'effects.txt'))).toEqual([
      'pass', // the bounded wait suspends until its deadline
      'pass',
      'approve null',
      'locked body, deploys 1',
      'key spool-X',
      'pass', // the sleep ended the process: no catch ran, nothing past it until the next pass
      'approve null',
      'locked body, deploys 2', // the lease is replayed, the body is ordinary code: it runs on every pass
      'key spool-X',
      'past the sleep',
      "refused true script_error usage: this run already holds the lock 'deploy'",
    ]);
    const { run, journal } = await recorded(dataDir, id);
    expect(run?.passes).toBe(3);
    expect(callsOf(journal)).toEqual(['wait.signal approve', 'lock deploy', 'step key', 'sleep']);
  }, 120_000);

  it('given an artifact put before a sleep, then the next pass gets the same bytes back, lists it, and the replayed put sends nothing', async () => {
    const { dir, dataDir, id, output, code } = await runScript(
      'artifacts.mjs',
      `import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { artifactGet, artifactList, artifactPut, sleep, stepFn } from '@hyperspool/sdk';
// A replayed put must not read the file: on pass 2 it holds other bytes.
writeFileSync('model.bin', process.env.SPOOL_PASS === '1' ? randomBytes(1_300_000) : 'other bytes');
const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const want = await stepFn('sha', () => sha('model.bin'));
await artifactPut('models/model.bin', 'model.bin');
await sleep(300);
const path = await artifactGet('models/model.bin', { dest: 'got.bin' });
log('pass ' + process.env.SPOOL_PASS + ': sha256 ' + (sha(path) === want ? 'matches' : 'differs'));
log('listed ' + JSON.stringify((await artifactList()).map((each) => [each.name, each.size])));
try {
  await artifactGet('nope');
} catch (error) {
  log('refused: ' + error.kind + ': ' + error.message);
}
`,
    );
    expect(output).toContain(`  ${id} succeeded`);
    expect(code).toBe(0);
    const effects = readLines(join(dir, 'effects.txt'));
    expect(effects).toContain('pass 2: sha256 matches');
    expect(effects).toContain('listed [["models/model.bin",1300000]]');
    expect(effects).toContain("refused: usage: no artifact 'nope' in this run (it has 'models/model.bin')");
    const { journal } = await recorded(dataDir, id);
    expect(journal.find((entry) => entry.kind === 'result' && entry.verb === 'artifact.put')?.data.size).toBe(1_300_000);
  }, 120_000);

  it('given steps printing bytes that are not plain text before a sleep, then both passes get the same bytes and the journal keeps them as stdoutBase64', async () => {
    const { dir, dataDir, id, output, code } = await runScript(
      'bytes.mjs',
      `import { sleep, step } from '@hyperspool/sdk';
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const latin = await step('latin', ['printf', 'caf\\\\351'], { check: false });
const nul = await step('nul', ['printf', 'x\\\\000y\\\\n'], { check: false });
log('pass ' + process.env.SPOOL_PASS + ' ' + hex(latin.bytes) + ' ' + hex(nul.bytes) + ' ' + JSON.stringify(latin.stdout));
await sleep(300);
`,
    );
    expect(output).toContain(`  ${id} succeeded`);
    expect(code).toBe(0);
    // The string stays the lossy text it always was; bytes are what the command printed.
    expect(readLines(join(dir, 'effects.txt'))).toEqual(['pass 1 636166e9 7800790a "caf\uFFFD"', 'pass 2 636166e9 7800790a "caf\uFFFD"']);
    const { journal } = await recorded(dataDir, id);
    const kept = (name: string) => journal.find((entry) => entry.kind === 'result' && entry.name === name)?.data.stdoutBase64;
    expect([kept('latin'), kept('nul')]).toEqual([Buffer.from('636166e9', 'hex').toString('base64'), Buffer.from('7800790a', 'hex').toString('base64')]);
  }, 120_000);
});

const TINY_GRAPH = '{"nodes": [{"id": "one", "type": "script", "config": {"interpreter": "bash", "body": "true"}}], "outputs": {"y": {"$expr": "input.x"}}}\n';

describe('callNode and callGraph', () => {
  it('given passes in new, empty directories, then an http callNode is sent once and replayed with its key, a 404 throws StepFailed, a bad config is refused, and callGraph returns the outputs without its file', async () => {
    const keys: string[] = [];
    const server = createServer((request, response) => {
      const key = String(request.headers['idempotency-key'] ?? '');
      if (request.method === 'POST') keys.push(key);
      response.writeHead(request.method === 'POST' ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ key }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = tempDir('spool-sdk-ts-');
    // Each pass runs in a new, empty directory (--fresh-dir): the log is written by absolute path,
    // and the graph file by a step, so passes 2 and 3 (the child run ends pass 1, the sleep pass 2)
    // have no file and their callGraph is answered from the journal.
    const effects = join(dir, 'effects.txt');
    writeFiles(dir, {
      'flow.mjs': `import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { callGraph, callNode, sleep, stepFn, ScriptError, StepFailed } from '@hyperspool/sdk';
const log = (line) => appendFileSync(${JSON.stringify(effects)}, 'pass ' + process.env.SPOOL_PASS + ': ' + line + '\\n');
await stepFn('write-graph', () => writeFileSync('tiny.json', ${JSON.stringify(TINY_GRAPH)}));
const charge = await callNode('http', { method: 'POST', url: '${url}', headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } }, { name: 'charge' });
log('charge ' + charge.status + ' key ' + charge.body.key);
try {
  await callNode('http', { url: '${url}/missing' }, { name: 'missing' });
} catch (error) {
  log('caught ' + (error instanceof StepFailed) + ' ' + error.exitCode);
}
try {
  await callNode('http', { url: '${url}', nope: 1 });
} catch (error) {
  log('refused ' + (error instanceof ScriptError) + ' ' + error.kind + ' ' + error.exitCode);
}
const there = existsSync('tiny.json');
log('graph ' + JSON.stringify(await callGraph('tiny.json', { input: { x: '5' } })) + ' (file there: ' + there + ')');
await sleep(10);
`,
    });
    try {
      const { code, output } = await spool(['run', 'flow.mjs', '--fresh-dir', '--data-dir', join(dir, 'data')], { cwd: dir });
      expect(code, output).toBe(0);
    } finally {
      server.close();
    }
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^spool-/);
    const lines = readLines(effects);
    expect(lines).toEqual(
      expect.arrayContaining([
        ...[1, 2, 3].map((pass) => `pass ${pass}: charge 200 key ${keys[0]}`),
        'pass 2: caught true 1',
        'pass 2: refused true usage 2',
        'pass 2: graph {"y":5} (file there: false)',
        'pass 3: graph {"y":5} (file there: false)',
      ]),
    );
  });
});
