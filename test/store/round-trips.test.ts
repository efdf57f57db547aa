import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitRun } from '../../src/engine/admission.js';
import { settleRun } from '../../src/engine/settle.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { SqlClient } from '../../src/store/sql.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import type { ClaimedPass } from '../../src/store/types.js';

/**
 * The statements a run costs the database, which every run pays (docs/benchmarks.md): a plain
 * submit is one insert, a first pass's claim one update, a run's end one statement; a transaction
 * (its begin and commit) only where a submit writes more than its run's row.
 */
describe('the round trips of a run', () => {
  let store: SqlStore;
  const sent: string[] = [];

  beforeAll(async () => {
    store = await openPgliteStore();
    const db = (store as unknown as { db: SqlClient }).db;
    const recording = (client: SqlClient): SqlClient => ({
      ...client,
      query: <Row>(sql: string, params: unknown[] = []) => {
        sent.push(sql.trim().split(/\s+/).slice(0, 3).join(' '));
        return client.query<Row>(sql, params);
      },
      transaction: <T>(fn: (tx: SqlClient) => Promise<T>) => {
        sent.push('begin');
        return client.transaction((tx) => fn(recording(tx)));
      },
    });
    Object.assign(db, recording({ ...db }));
  }, 120_000);
  afterAll(() => store?.close());

  const source = { workflow: 'three.sh', interpreter: 'bash -eu', script: 'spool step a -- true\n', cwd: null };
  const statements = async (work: () => Promise<unknown>): Promise<string[]> => {
    sent.length = 0;
    await work();
    return [...sent];
  };

  it('given a plain submit, a first pass and its end, then each is one statement, none in a transaction', async () => {
    let id = '';
    expect(await statements(async () => (id = (await submitRun(store, { env: 'dev', project: 'p', source }, new Date())).run.id))).toEqual([
      'insert into runs',
    ]);
    const claims: (ClaimedPass | null)[] = [];
    expect(await statements(async () => claims.push(await store.startPass(id)))).toEqual(['update runs set']);
    const [claimed] = claims;
    expect(claimed?.journal).toEqual([]);
    expect(await statements(() => settleRun(store, claimed!.run, { kind: 'succeeded' }, new Date()))).toEqual(['with ended as']);
    expect((await store.getRun(id))?.status).toBe('succeeded');
  });

  it('given a run with a journal, then its claim reads it too; given a submit into a concurrency group, then it is one transaction', async () => {
    const { run } = await submitRun(store, { env: 'dev', project: 'p', source }, new Date());
    await store.startPass(run.id);
    await store.appendJournal({ runId: run.id, position: 0, kind: 'call', verb: 'sleep', name: '', occurrence: 0, data: {} });
    await store.updateRun(run.id, { status: 'waiting', wakeAt: new Date() });
    expect(await statements(() => store.startPass(run.id))).toEqual(['update runs set', 'select * from']);

    const grouped = await statements(() => submitRun(store, { env: 'dev', project: 'p', source, concurrency: { group: 'g', policy: 'queue' } }, new Date()));
    expect(grouped[0]).toBe('begin');
    expect(grouped).toContain('insert into runs');
  });

  it('given steps of many passes recorded at once, then their journal entries share statements: the first alone, the rest in one', async () => {
    const step = (runId: string, kind: 'call' | 'result') => ({ runId, position: 0, kind, verb: 'step', name: 'a', occurrence: 0, data: {} });
    const runs = Array.from({ length: 12 }, (_, i) => `grouped-${i}`);
    const sentNow = await statements(() => Promise.all(runs.map((id) => store.appendJournalEntries([step(id, 'call'), step(id, 'result')]))));
    expect(sentNow).toEqual(['insert into journal', 'insert into journal']);
    for (const id of runs) expect((await store.readJournal(id)).map((e) => e.kind)).toEqual(['call', 'result']);
  });

  it('given an executor claiming several due runs in one tick, then its claims share statements: the first alone, the rest in one', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await submitRun(store, { env: 'dev', project: 'p', source }, new Date())).run.id);
    const claims: (ClaimedPass | null)[] = [];
    expect(await statements(async () => claims.push(...(await Promise.all(ids.map((id) => store.startPass(id))))))).toEqual(['update runs set', 'update runs set']);
    expect(claims.map((c) => c?.run.id)).toEqual(ids);
  });
});
