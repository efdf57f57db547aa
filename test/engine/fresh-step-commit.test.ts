import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pass, type PassHost } from '../../src/engine/pass.js';
import { CALL_VISIBLE_MS } from '../../src/engine/pass-state.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * A fresh step's call and result are written in one commit (issue 32): the call entry waits for
 * the result while the step is short, is written on its own once the step runs past
 * CALL_VISIBLE_MS (so a long step shows as running), and is never written for a step whose pass
 * ended without its result, which the next pass runs again. On real PostgreSQL: rows written by
 * one transaction share their xmin.
 */

let postgres: TestPostgres;
let store: Store;
let db: pg.Client;
const host: PassHost = { now: () => new Date(), capabilities: ['shell'], maxResultBytes: 1024, env: 'dev', notify: () => undefined };

beforeAll(async () => {
  postgres = await startPostgres();
  const url = await postgres.createDatabase();
  store = await openPostgresStore(url);
  db = new pg.Client({ connectionString: url });
  await db.connect();
}, 120_000);
afterAll(async () => {
  await db?.end();
  await store?.close();
  await postgres?.stop();
});

let counter = 0;
async function newPass(): Promise<Pass> {
  const { run } = await store.createRun({
    id: `dev:test:run-${String(++counter).padStart(16, '0')}`,
    project: 'test',
    workflow: 'x.sh',
    interpreter: 'bash -eu',
    script: '',
  });
  const { run: started, journal } = (await store.startPass(run.id))!;
  return Pass.start(store, started, host, false, journal);
}

/** The run's journal rows, with the transaction that wrote each. */
interface Row {
  position: number;
  kind: string;
  xmin: string;
}
async function rows(runId: string): Promise<Row[]> {
  return (await db.query<Row>(`select position, kind, xmin::text as xmin from journal where run_id = $1 order by position, kind`, [runId])).rows;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a fresh step', () => {
  it('writes its call and its result in one commit when it ends quickly, a step and a step_fn alike', async () => {
    const pass = await newPass();
    const step = await pass.handle({ verb: 'step', name: 'a' });
    expect(step.status).toBe('execute');
    expect(await rows(pass.run.id)).toEqual([]); // nothing written while it runs
    expect(await pass.handle({ verb: 'done', position: 0, stdout: 'A\n', exitCode: 0 })).toMatchObject({ status: 'ok' });
    expect(await pass.handle({ verb: 'step_fn', name: 'f' })).toMatchObject({ status: 'execute', position: 1 });
    expect(await pass.handle({ verb: 'done', position: 1, value: { n: 1 } })).toMatchObject({ status: 'ok' });
    const written = await rows(pass.run.id);
    expect(written.map((r) => `${r.position}:${r.kind}`)).toEqual(['0:call', '0:result', '1:call', '1:result']);
    expect(written[0]!.xmin).toBe(written[1]!.xmin);
    expect(written[2]!.xmin).toBe(written[3]!.xmin);
    expect(written[0]!.xmin).not.toBe(written[2]!.xmin);

    // The next pass answers both from the journal.
    const replay = await Pass.start(store, (await store.getRun(pass.run.id))!, host);
    expect(await replay.handle({ verb: 'step', name: 'a' })).toMatchObject({ status: 'ok', stdout: 'A\n', replayed: true });
    expect(await replay.handle({ verb: 'step_fn', name: 'f' })).toMatchObject({ status: 'ok', value: { n: 1 }, replayed: true });
  });

  it('shows as running once it runs past CALL_VISIBLE_MS: its call is written on its own, its result later', async () => {
    const pass = await newPass();
    await pass.handle({ verb: 'step', name: 'long', label: 'a long one' });
    await sleep(CALL_VISIBLE_MS * 3);
    const running = await rows(pass.run.id);
    expect(running.map((r) => r.kind)).toEqual(['call']);
    expect(pass.recordedAt(0)).toMatchObject({ verb: 'step', name: 'long', data: { label: 'a long one' } });
    await pass.handle({ verb: 'done', position: 0, stdout: '', exitCode: 0 });
    const ended = await rows(pass.run.id);
    expect(ended.map((r) => r.kind)).toEqual(['call', 'result']);
    expect(ended[0]!.xmin).not.toBe(ended[1]!.xmin);
  });

  it('whose pass ended before its result writes nothing, and the next pass runs it again', async () => {
    const pass = await newPass();
    const first = await pass.handle({ verb: 'step', name: 'cut' });
    expect(first).toMatchObject({ status: 'execute' });
    pass.end(); // the script died mid-step
    await sleep(CALL_VISIBLE_MS * 3);
    expect(await rows(pass.run.id)).toEqual([]);
    const next = await Pass.start(store, (await store.getRun(pass.run.id))!, host);
    const again = await next.handle({ verb: 'step', name: 'cut' });
    expect(again).toMatchObject({ status: 'execute', position: 0 });
    // Same call, same idempotency key: the command can tell it is the same step run again.
    expect(again.status === 'execute' && first.status === 'execute' && again.idempotencyKey === first.idempotencyKey).toBe(true);
  });

  it("whose result is read only after its pass ended (a cancel killed the script as it sent it) records nothing, a step and a step_fn alike", async () => {
    const pass = await newPass();
    expect(await pass.handle({ verb: 'step', name: 'a' })).toMatchObject({ status: 'execute', position: 0 });
    expect(await pass.handle({ verb: 'step_fn', name: 'f' })).toMatchObject({ status: 'execute', position: 1 });
    pass.end(); // the script is gone; its last lines are still in the socket
    // A result whose handling began before the end (and reached the journal after it) is refused too.
    await expect(pass.recordResult(pass.executing.get(0)!, { stdout: 'A\n', exitCode: 0 })).rejects.toThrow(/after its pass ended/);
    expect(await pass.handle({ verb: 'done', position: 0, stdout: 'A\n', exitCode: 0 })).not.toMatchObject({ status: 'ok' });
    expect(await pass.handle({ verb: 'done', position: 1, value: 1 })).not.toMatchObject({ status: 'ok' });
    expect(await pass.handle({ verb: 'step', name: 'later' })).not.toMatchObject({ status: 'execute' });
    // Never a result without its call: the next pass meets both calls as new and runs them again.
    expect(await rows(pass.run.id)).toEqual([]);
    const next = await Pass.start(store, (await store.getRun(pass.run.id))!, host);
    expect(await next.handle({ verb: 'step', name: 'a' })).toMatchObject({ status: 'execute', position: 0 });
  });
});
