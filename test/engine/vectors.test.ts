import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pass, type PassHost } from '../../src/engine/pass.js';
import type { Answer, Request } from '../../src/engine/protocol.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';

/**
 * The SDKs' protocol vectors (sdk/testdata, format in its README) against the real engine: the
 * requests each SDK is tested to send must get from the engine the answers each SDK is tested to
 * handle.
 */
interface Vector {
  name: string;
  exchanges: { request: Request; reply: Record<string, unknown> | null }[];
  engine?: { earlierPasses?: Request[][]; signals?: [string, string][]; before?: Request[] };
}

const directory = new URL('../../sdk/testdata/vectors/', import.meta.url);
const vectors = readdirSync(directory)
  .filter((file) => file.endsWith('.json'))
  .flatMap((file) => (JSON.parse(readFileSync(new URL(file, directory), 'utf8')) as { vectors: Vector[] }).vectors.map((vector) => ({ file, vector })));

const t0 = Date.parse('2030-01-01T00:00:00.000Z');
const DAY = 86_400_000;

function hostAt(time: number): PassHost {
  return { now: () => new Date(time), capabilities: ['shell', 'polyglot'], maxResultBytes: 1024 * 1024, env: 'dev', notify: () => undefined };
}

/** The engine's answer matches the vector's reply, as sdk/testdata/README.md says. */
function expectMatch(answer: Answer, reply: Record<string, unknown>): void {
  const got = answer as Record<string, unknown>;
  for (const [key, wanted] of Object.entries(reply)) {
    if (key === 'idempotencyKey') expect(got[key]).toMatch(/^spool-[0-9a-f]{32}$/);
    else if (key === 'message' || key === 'stderr') expect(String(got[key])).toContain(String(wanted));
    else if (key === 'stdout' && reply.status === 'ok' && String(wanted).startsWith('{"protocol"')) {
      const engine = JSON.parse(String(got.stdout)) as { protocol: number; verbs: string[] };
      const vector = JSON.parse(String(wanted)) as { protocol: number; verbs: string[] };
      expect(engine.protocol).toBe(vector.protocol);
      expect(engine.verbs).toEqual(expect.arrayContaining(vector.verbs));
    } else if (key === 'value') expect(JSON.stringify(got.value)).toBe(JSON.stringify(wanted)); // key order too
    else expect({ [key]: got[key] }).toEqual({ [key]: wanted });
  }
}

describe('the SDK protocol vectors, against the engine', () => {
  let store: Store;
  let runs = 0;

  beforeAll(async () => {
    store = await openPgliteStore();
  });

  afterAll(async () => {
    await store.close();
  });

  const checked = vectors.filter(({ vector }) => vector.engine !== undefined);

  it('there are vectors of every file to check', () => {
    expect(new Set(checked.map(({ file }) => file)).size).toBe(new Set(vectors.map(({ file }) => file)).size);
  });

  it.each(checked.map(({ file, vector }) => [`${file}: ${vector.name}`, vector] as const))('%s', async (_, vector) => {
    const engine = vector.engine ?? {};
    // A project of its own, so no other vector's run holds its leases or cells.
    const project = `vectors-${(runs += 1)}`;
    const { run } = await store.createRun({
      id: `dev:${project}:run-0000000000000000`,
      project,
      workflow: 'v.sh',
      interpreter: 'bash -eu',
      script: '',
      input: null,
    });
    for (const [name, payload] of engine.signals ?? []) await store.sendSignal(run.id, name, payload);
    let time = t0;
    for (const requests of engine.earlierPasses ?? []) {
      const pass = await Pass.start(store, run, hostAt(time));
      for (const request of requests) await pass.handle(request);
      time += DAY;
    }
    const pass = await Pass.start(store, run, hostAt(time));
    for (const request of engine.before ?? []) await pass.handle(request);
    for (const { request, reply } of vector.exchanges) {
      const answer = await pass.handle(request);
      if (reply) expectMatch(answer, reply);
    }
  });

  it('an unknown verb (an SDK newer than the agent) is a usage error that says so, and takes no position', async () => {
    const { run } = await store.createRun({ id: 'dev:unknown:run-0000000000000000', project: 'unknown', workflow: 'v.sh', interpreter: 'bash -eu', script: '', input: null });
    const pass = await Pass.start(store, run, hostAt(t0));
    const answer = await pass.handle({ verb: 'artifact.delete' } as unknown as Request);
    expect(answer).toEqual({
      status: 'error',
      kind: 'usage',
      message: "unknown verb 'artifact.delete': this agent speaks protocol 2 and does not know it (is the script's SDK newer than the agent?)",
      exitCode: 2,
    });
    expect(await pass.handle({ verb: 'step_fn', name: 'first' })).toMatchObject({ status: 'execute', position: 0 });
  });
});
