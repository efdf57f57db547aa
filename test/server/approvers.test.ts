import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { createApp } from '../../src/server/app.js';
import { HttpError } from '../../src/server/http-error.js';
import { listen } from '../../src/server/listen.js';
import { finalLog, poll, waitForRun } from '../support/dev.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { removeTempDirs } from '../support/spool.js';

/**
 * A gate that asks several people (approval.approvers, issue 33 item 11), through the HTTP API on
 * real PostgreSQL. The dev server runs the passes; beside it the same API serves each request as the
 * person its bearer token names, with that person's groups: what the operator's authorizer does
 * with a TokenReview on a cluster (the aggregated API's own test checks that part there).
 */

const PEOPLE: Record<string, { user: string; groups: string[] }> = {
  sam: { user: 'sam', groups: ['release'] },
  alice: { user: 'alice', groups: [] },
  bob: { user: 'bob', groups: [] },
  carol: { user: 'carol', groups: ['release'] },
  dave: { user: 'dave', groups: ['support'] },
};

const DOCUMENT = `name: release
jobs:
  ask:
    approval:
      prompt: "Ship it?"
      timeout: 1h
      approvers:
        count: 2
        from: [alice, bob, "group:release"]
      form:
        note:
          type: string
  ship:
    depends_on: [ask]
    steps:
      - name: ship
        run: echo "shipped, approved by \${{ steps.ask.output.approvals[0].by }} and \${{ steps.ask.output.approvals[1].by }}, last \${{ steps.ask.output.answered_by }}"
`;

let postgres: TestPostgres;
let dev: DevServer;
let api: Server;
let url: string;

beforeAll(async () => {
  postgres = await startPostgres();
  dev = await startDevServer({ port: 0, databaseUrl: postgres.url, pollMs: 50 });
  const authorize = (header: string) => {
    const person = PEOPLE[/^Bearer (.+)$/.exec(header)?.[1] ?? ''];
    if (!person) return Promise.reject(new HttpError(401, 'unauthenticated', 'no such token'));
    return Promise.resolve(person);
  };
  api = await listen(
    createApp({ store: dev.store, env: 'dev', defaultProject: 'default', now: () => new Date(), poke: () => undefined, abortPass: () => undefined, authorize }),
    0,
    '127.0.0.1',
    '--port',
  );
  const address = api.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}, 120_000);

afterAll(async () => {
  api?.close();
  await dev?.close();
  await postgres?.stop();
  removeTempDirs();
});

async function as(person: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${person}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Submits the document as sam and waits for its gate. */
async function submitted(): Promise<string> {
  const { status, json } = await as('sam', 'POST', '/runs', { workflow: 'release.yaml', interpreter: 'pipeline', script: DOCUMENT });
  expect(status, JSON.stringify(json)).toBe(201);
  const id = (json.run as { id: string }).id;
  await poll('the gate waiting', async () => (await gates(id))[0]?.state === 'waiting');
  return id;
}

type GateView = { state: string; approvers: unknown; answers: { by: string; decision: string; final: boolean; values: unknown }[] };

async function gates(id: string): Promise<GateView[]> {
  return ((await as('sam', 'GET', `/runs/${encodeURIComponent(id)}/approvals`)).json.approvals ?? []) as GateView[];
}

const answer = (person: string, id: string, decision: 'approve' | 'reject', values?: Record<string, string>) =>
  as(person, 'POST', `/runs/${encodeURIComponent(id)}/approvals/ask`, { decision, ...(values ? { values } : {}) });

const errorOf = (json: Record<string, unknown>) => json.error as { code: string; message: string };

describe('a gate with approvers: {count: 2, from: [alice, bob, group:release]}', () => {
  it('given alice approves, then the gate waits (1 of 2); her second answer is 409 and not counted; the submitter, an outsider and an unknown token are refused; carol by her group opens it, and the next job reads both approvals', async () => {
    const id = await submitted();
    expect((await gates(id))[0]?.approvers).toEqual({ count: 2, from: ['alice', 'bob', 'group:release'] });

    const first = await answer('alice', id, 'approve', { note: 'looks good' });
    expect(first.status).toBe(200);
    expect(first.json.approvals).toEqual({ counted: 1, needed: 2, by: ['alice'] });
    expect((await gates(id))[0]?.state).toBe('waiting');

    const twice = await answer('alice', id, 'approve');
    expect(twice.status).toBe(409);
    expect(errorOf(twice.json).code).toBe('answered_twice');
    expect(errorOf(twice.json).message).toMatch(/^alice already approved the approval 'ask' \(api\) at \S+; each person answers once \(1 of 2 approvals\)$/);

    // sam is in group:release, but submitted the run.
    const submitter = await answer('sam', id, 'approve');
    expect(submitter.status).toBe(403);
    expect(errorOf(submitter.json)).toEqual({ code: 'submitter', message: `sam submitted run ${id} and may not approve its approval 'ask'; it asks 2 of alice, bob, group:release` });

    const outsider = await answer('dave', id, 'reject');
    expect(outsider.status).toBe(403);
    expect(errorOf(outsider.json)).toEqual({ code: 'not_an_approver', message: "dave may not answer the approval 'ask': it asks alice, bob, group:release" });
    expect((await answer('mallory', id, 'approve')).status).toBe(401);

    // Nothing refused was kept, and the gate still waits.
    expect((await gates(id))[0]?.answers.map((each) => each.by)).toEqual(['alice']);
    expect((await gates(id))[0]?.state).toBe('waiting');

    const second = await answer('carol', id, 'approve', { note: 'ship' });
    expect(second.status).toBe(200);
    expect(second.json.approvals).toEqual({ counted: 2, needed: 2, by: ['alice', 'carol'] });
    expect(await waitForDev(id)).toBe('succeeded');
    expect(await finalLog(dev.url, id)).toContain('shipped, approved by alice and carol, last carol');
    const [gate] = await gates(id);
    expect(gate?.state).toBe('approved');
    expect(gate?.answers.map((each) => [each.by, each.decision, each.final, each.values])).toEqual([
      ['alice', 'approve', false, { note: 'looks good' }],
      ['carol', 'approve', true, { note: 'ship' }],
    ]);
  }, 120_000);

  it('given alice approves and bob rejects, then the first rejection closes the gate and cancels the run', async () => {
    const id = await submitted();
    expect((await answer('alice', id, 'approve')).status).toBe(200);
    const rejected = await answer('bob', id, 'reject');
    expect(rejected.status).toBe(200);
    expect(await waitForDev(id)).toBe('cancelled');
    const [gate] = await gates(id);
    expect(gate?.state).toBe('rejected');
    expect(gate?.answers.map((each) => [each.by, each.decision, each.final])).toEqual([
      ['alice', 'approve', false],
      ['bob', 'reject', true],
    ]);
    const late = await answer('carol', id, 'approve');
    expect(late.status).toBe(409);
    expect(errorOf(late.json).code).toBe('already_answered');
  }, 120_000);

  it('given alice and bob approve at the same moment, then both count, exactly one is the second, and the gate opens once', async () => {
    const id = await submitted();
    const [a, b] = await Promise.all([answer('alice', id, 'approve'), answer('bob', id, 'approve')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const counts = [a.json.approvals, b.json.approvals].map((each) => (each as { counted: number }).counted).sort();
    expect(counts).toEqual([1, 2]);
    expect(await waitForDev(id)).toBe('succeeded');
    const [gate] = await gates(id);
    expect(gate?.answers.filter((each) => each.final)).toHaveLength(1);
    expect(gate?.answers.map((each) => each.by).sort()).toEqual(['alice', 'bob']);
  }, 120_000);
});

/** The run's status once it ends, read from the dev server (which serves without tokens). */
async function waitForDev(id: string): Promise<string> {
  return (await waitForRun(dev.url, id, undefined, 60_000)).status;
}
