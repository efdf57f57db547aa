import fc from 'fast-check';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentSocket } from '../../src/agent/socket-server.js';
import { Pass, type PassHost } from '../../src/engine/pass.js';
import { REQUEST_SCHEMAS } from '../../src/engine/request-schema.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';
import { propertyRuns } from '../support/property.js';
import { removeTempDirs, tempDir } from '../support/spool.js';

/**
 * The spool socket under random and mutated requests (issues 15, 28 and 30: call.node configs and
 * call-graph's graph calls too): whatever a script sends,
 * the agent answers on the same connection, never with an `internal` error; a refusal says why in
 * one line, leaves the run's journal, state and wait as they were, and a valid call right after it
 * still works. Bounded: a few hundred cases a run, with fast-check's seed printed on a failure.
 */

/** A valid request of every verb, to mutate. */
const VALID: Record<string, unknown>[] = [
  { verb: 'step', name: 'a', label: 'x' },
  { verb: 'step_fn', name: 'f' },
  { verb: 'done', position: 0, stdout: 'out', exitCode: 0 },
  { verb: 'done', position: 0, stdout: '', exitCode: 1, stderrTail: 'no cars left' },
  { verb: 'done', position: 0, value: { a: 1 } },
  { verb: 'sleep', ms: 1000 },
  { verb: 'wait.signal', name: 'go', timeoutMs: 1000 },
  { verb: 'wait.event', type: 't', timeoutMs: 1000 },
  { verb: 'lock', group: 'g', command: true },
  { verb: 'activity.submit', name: 'a', argv: ['true'], requires: [], attempts: 1, backoffMs: 10, retryOnExit: null },
  { verb: 'activity.wait', name: 'a' },
  { verb: 'activity.wait', all: true },
  { verb: 'state.get', key: 'k' },
  { verb: 'state.set', key: 'k', value: 'v', entity: 'e' },
  { verb: 'state.list', prefix: 'k' },
  { verb: 'state.add', key: 'k', value: 'v' },
  { verb: 'state.incr', key: 'n', by: 1, op: 'o' },
  { verb: 'state.cas', key: 'k', expected: null, value: 'v' },
  { verb: 'event.emit', type: 't', subject: 's', payload: { a: 1 } },
  { verb: 'spawn', workflow: 'c.sh', script: 'true', interpreter: 'bash -eu', input: null },
  { verb: 'wait.children', runIds: ['dev:p:run-x'] },
  { verb: 'call.node', type: 'sleep', config: { duration: '1ms' }, name: 'nap' },
  // spool call-graph: a graph document as a child run, and one whose file the client could not read.
  { verb: 'call', workflow: 'g.json', script: '{"nodes":[{"id":"nap","type":"sleep","config":{"duration":"1ms"}}]}', interpreter: 'graph', input: { x: '1' } },
  { verb: 'call', workflow: 'g.json', script: '', interpreter: 'graph', unreadable: 'spool call-graph: cannot read g.json: no such file' },
  { verb: 'output.set', key: 'k', value: 'v' },
  { verb: 'annotate', text: 'note' },
  { verb: 'agent.info' },
];

const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '\n', 'a\u0000b', 'x'.repeat(300), -1, 1.5, 1e300, -0, Number.MAX_SAFE_INTEGER + 2),
  // An object that cannot be made a string (String() throws): CI once drew one as a verb.
  fc.constant({ toString: {} }),
);

/** A valid request with one thing changed: a field dropped, added, or given another value. */
const mutated = fc
  .tuple(
    fc.constantFrom(...VALID),
    fc.nat(),
    fc.constantFrom('drop', 'add', 'replace', 'verb'),
    fc.string(),
    anyValue,
    fc.constantFrom(...Object.keys(REQUEST_SCHEMAS), 'frob', '', 'state.'),
  )
  .map(([request, pick, how, key, value, otherVerb]) => {
    const copy: Record<string, unknown> = { ...request };
    const fields = Object.keys(copy).filter((field) => field !== 'verb');
    const field = fields.length ? (fields[pick % fields.length] ?? 'verb') : 'verb';
    if (how === 'drop') delete copy[field];
    else if (how === 'add') copy[key || 'extra'] = value;
    else if (how === 'replace') copy[field] = value;
    else copy.verb = pick % 5 === 0 ? value : otherVerb.replace(/:.*/, '');
    return JSON.stringify(copy);
  });

/**
 * A valid config of each node kind `spool call-node` runs, none reaching out (port 9 refuses at
 * once); `call` is left out, as it would read a file of the working directory.
 */
const NODE_CONFIGS: [string, Record<string, unknown>][] = [
  ['sleep', { duration: '1ms' }],
  ['http', { method: 'POST', url: 'http://127.0.0.1:9/x', headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } }, timeout: '1s' }],
  ['wait', { signal: 'go', timeout: '1s' }],
  ['approval', { prompt: 'ok?' }],
  ['script', { interpreter: 'bash', body: 'true' }],
];

/** A call.node whose config has one key changed: dropped, added, or given another value (an `$expr` too). */
const nodeCall = fc
  .tuple(fc.constantFrom(...NODE_CONFIGS), fc.nat(), fc.constantFrom('drop', 'add', 'replace'), fc.string(), fc.oneof(anyValue, fc.string().map(($expr) => ({ $expr }))))
  .map(([[type, config], pick, how, key, value]) => {
    const copy: Record<string, unknown> = { ...config };
    const field = Object.keys(copy)[pick % Object.keys(copy).length] ?? 'extra';
    if (how === 'drop') delete copy[field];
    else if (how === 'add') copy[key || 'extra'] = value;
    else copy[field] = value;
    return JSON.stringify({ verb: 'call.node', type, config: copy });
  });

/** A line as a script might send it: a mutated request, any JSON, or any text at all. */
const line = fc
  .oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: nodeCall },
    { weight: 2, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }).map((text) => text.replaceAll('\n', ' ')) },
    // Blank lines are skipped by the framing (docs/protocol.md) and get no answer.
  )
  .filter((text) => text.trim() !== '');

/** Counterexamples seeds found, tried first on every run. */
const FOUND: [string[]][] = [
  // A verb, or a field's name, with a line break made a refusal of two lines (seed 597452070).
  [['{"verb":"\\n"}']],
  [['{"verb":"step","name":"a","x\\ny":1}']],
  // An empty reason the file could not be read made a refusal of no line at all (seed 1621283027).
  [['{"verb":"call","workflow":"g.json","script":"","interpreter":"graph","unreadable":""}']],
  [['{"verb":"artifact.put","name":"a","unreadable":""}']],
];

function hostAt(): PassHost {
  return { now: () => new Date(), capabilities: ['shell'], maxResultBytes: 4096, env: 'dev', notify: () => undefined };
}

/** One connection to an agent socket: send a line, read the answer line. */
class Client {
  private buffered = '';
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let at = this.buffered.indexOf('\n'); at >= 0; at = this.buffered.indexOf('\n')) {
        const answer = this.buffered.slice(0, at);
        this.buffered = this.buffered.slice(at + 1);
        this.waiting.shift()?.(answer);
      }
    });
  }

  static connect(path: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path, () => resolve(new Client(socket)));
      socket.once('error', reject);
    });
  }

  ask(text: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${text.slice(0, 200)}`)), 10_000);
      this.waiting.push((answer) => {
        clearTimeout(timer);
        resolve(JSON.parse(answer) as Record<string, unknown>);
      });
      this.socket.write(`${text}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('the spool socket, fuzzed', () => {
  let store: Store;
  let runs = 0;

  beforeAll(async () => {
    store = await openPgliteStore();
  });

  /** What a refused call must leave as it was: the run's journal, its state and what it waits for. */
  const recorded = async (id: string) => {
    const run = await store.getRun(id);
    return { journal: await store.readJournal(id), status: run?.status, awaiting: run?.awaiting, wakeAt: run?.wakeAt };
  };

  afterAll(async () => {
    await store.close();
    removeTempDirs();
  });

  it('never answers internal; a refusal is one line, records nothing, and a valid call afterwards works', async () => {
    const dir = tempDir();
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 3 }), async (lines) => {
        runs += 1;
        const { run } = await store.createRun({
          id: `dev:fuzz:run-${String(runs).padStart(16, '0')}`,
          project: 'fuzz',
          workflow: 'f.sh',
          interpreter: 'bash -eu',
          script: '',
          input: null,
        });
        const pass = await Pass.start(store, run, hostAt());
        const agent = new AgentSocket(pass, () => undefined);
        const path = join(dir, `s${runs}`);
        await agent.listen(path);
        const client = await Client.connect(path);
        try {
          let ended = false;
          for (const text of lines) {
            const before = await recorded(run.id);
            const answer = await client.ask(text);
            const said = `${text} → ${JSON.stringify(answer)}`;
            expect(answer.kind, said).not.toBe('internal');
            if (answer.status === 'suspended' || answer.kind === 'determinism') ended = true;
            // A node that ran and failed (a call-node's exit 1) says why in one line too.
            if (typeof answer.stderr === 'string') expect(answer.stderr, said).toMatch(/^[^\n]+$/);
            if (answer.status !== 'error' || ended) continue;
            // A refusal: one line saying why, nothing recorded, and the connection takes a valid call.
            expect(answer.message, said).toMatch(/^[^\n]+$/);
            expect(await recorded(run.id), said).toEqual(before);
            expect(await client.ask(JSON.stringify({ verb: 'state.get', key: 'probe' })), `after ${said}`).toMatchObject({ status: 'ok' });
          }
          // A pass that suspended (a valid sleep, wait...) has ended: its script must stop, as designed.
          if (!ended)
            expect(await client.ask(JSON.stringify({ verb: 'step', name: 'after' }))).toMatchObject({
              status: 'execute',
            });
        } finally {
          client.close();
          await agent.close();
        }
      }),
      propertyRuns('the spool socket', 300, FOUND),
    );
  }, 120_000);
});
