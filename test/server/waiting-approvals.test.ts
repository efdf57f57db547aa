import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACT_AS_HEADER } from '../../src/api/act-as.js';
import type { ResponseOf } from '../../src/api/responses.js';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { createApp } from '../../src/server/app.js';
import { HttpError } from '../../src/server/http-error.js';
import { listen } from '../../src/server/listen.js';
import { poll } from '../support/dev.js';
import { removeTempDirs, tempDir } from '../support/spool.js';

/**
 * The approvals waiting for the person asking (`GET /v1/approvals/waiting`, issue 33 item 9) on a
 * real `spool dev`, each person named with `spool --as`'s header; beside it the same API serving
 * each request as its bearer token's person with their groups, as the operator's authorizer does.
 */

const gateOf = (name: string, approvers: string | null) => `name: ${name}
jobs:
  ask:
    approval:
      prompt: "Ship ${name}?"
      timeout: 1h${approvers ? `\n      approvers: ${approvers}` : ''}
`;

const PEOPLE: Record<string, { user: string; groups: string[] }> = { erin: { user: 'erin', groups: ['ops'] } };

let dev: DevServer;
let api: Server;
let apiUrl: string;
const runs: Record<string, string> = {};

beforeAll(async () => {
  dev = await startDevServer({ port: 0, dataDir: `${tempDir('spool-waiting-approvals-')}/data`, pollMs: 50 });
  const authorize = (header: string) => {
    const person = PEOPLE[/^Bearer (.+)$/.exec(header)?.[1] ?? ''];
    return person ? Promise.resolve(person) : Promise.reject(new HttpError(401, 'unauthenticated', 'no such token'));
  };
  api = await listen(createApp({ store: dev.store, env: 'dev', defaultProject: 'default', now: () => new Date(), poke: () => undefined, abortPass: () => undefined, authorize }), 0, '127.0.0.1', '--port');
  const address = api.address();
  apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  // Two people ask: alice's release (alice, bob or anyone in ops, two of them), and carol's
  // refund (anyone) and hotfix (dave alone).
  const documents: [string, string, string | null][] = [
    ['release', 'alice', '{count: 2, from: [alice, bob, "group:ops"]}'],
    ['refund', 'carol', null],
    ['hotfix', 'carol', '{count: 1, from: [dave]}'],
  ];
  for (const [name, submitter, approvers] of documents) {
    const response = await fetch(`${dev.url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ACT_AS_HEADER]: submitter },
      body: JSON.stringify({ workflow: `${name}.yaml`, interpreter: 'pipeline', script: gateOf(name, approvers) }),
    });
    runs[name] = ((await response.json()) as ResponseOf<'POST /runs'>).run.id;
  }
  await poll('the three gates waiting', async () => ((await waitingFor('dave')).approvals.length === 2 && (await waitingFor('bob')).approvals.length === 2) || null);
}, 60_000);
afterAll(async () => {
  api?.close();
  await dev?.close();
  removeTempDirs();
});

type Waiting = ResponseOf<'GET /approvals/waiting'>;

async function waitingFor(person: string): Promise<Waiting> {
  const response = await fetch(`${dev.url}/v1/approvals/waiting`, { headers: { [ACT_AS_HEADER]: person } });
  expect(response.status).toBe(200);
  return (await response.json()) as Waiting;
}

/** Which runs' gates are listed, by the names above in their order (gates start in any order), with how many approvals each still needs. */
const listed = (waiting: Waiting) =>
  waiting.approvals.map((each) => [Object.keys(runs).find((name) => runs[name] === each.run.id) ?? '', each.stillNeeded] as const).sort(([a], [b]) => a.localeCompare(b));

const approve = (person: string, name: string) =>
  fetch(`${dev.url}/v1/runs/${encodeURIComponent(runs[name] ?? '')}/approvals/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ACT_AS_HEADER]: person },
    body: JSON.stringify({ decision: 'approve' }),
  });

describe('approvals waiting for me', () => {
  it('lists the gates each person may answer: named or in a group, not in a run they submitted, not answered by them yet; and gates that ask no one in particular', async () => {
    const bob = await waitingFor('bob');
    expect(bob.caller).toEqual({ user: 'bob', groups: [] });
    expect(listed(bob)).toEqual([['refund', 1], ['release', 2]]);
    const release = bob.approvals.find((each) => each.run.id === runs.release);
    expect(release?.gate).toMatchObject({ job: 'ask', state: 'waiting', prompt: 'Ship release?', approvers: { count: 2, from: ['alice', 'bob', 'group:ops'] } });
    expect(release?.run).toEqual({ id: runs.release, workflow: 'release.yaml', subject: null, submittedBy: 'alice' });

    // alice submitted the release: she may not approve it. dave is the hotfix's only approver.
    expect(listed(await waitingFor('alice'))).toEqual([['refund', 1]]);
    expect(listed(await waitingFor('dave'))).toEqual([['hotfix', 1], ['refund', 1]]);

    expect((await approve('bob', 'release')).status).toBe(200);
    // bob answered the release: it leaves his list, and needs one more from the others.
    expect(listed(await waitingFor('bob'))).toEqual([['refund', 1]]);
    // erin is in ops, a group only an authenticating server knows.
    const erin = (await (await fetch(`${apiUrl}/v1/approvals/waiting`, { headers: { authorization: 'Bearer erin' } })).json()) as Waiting;
    expect(erin.caller).toEqual({ user: 'erin', groups: ['ops'] });
    expect(listed(erin)).toEqual([['refund', 1], ['release', 1]]);
    expect((await fetch(`${apiUrl}/v1/approvals/waiting`)).status).toBe(401);

    // An answered gate leaves every list.
    expect((await approve('dave', 'refund')).status).toBe(200);
    await poll('the refund gate settled', async () => (await waitingFor('dave')).approvals.length === 1 || null);
    expect(listed(await waitingFor('dave'))).toEqual([['hotfix', 1]]);
    expect(listed(await waitingFor('alice'))).toEqual([]);
  });

  it('refuses a bad query with one line: 400 naming it', async () => {
    const response = await fetch(`${dev.url}/v1/approvals/waiting?limit=5`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("'limit'");
  });
});
