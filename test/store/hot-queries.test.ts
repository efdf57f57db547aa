import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { SqlClient } from '../../src/store/sql.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { partitionJournal } from '../support/partition-journal.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * Every hot query of the store (what the executor, the waits and the sweeps run all the time) goes
 * straight to its rows through an index, so its cost does not grow with the runs asleep beside it
 * (issue 36, item 3). A small variant for CI: 60,000 runs, 50,000 of them asleep, made in SQL; each
 * query the store sends for one call is run under EXPLAIN ANALYZE (in a transaction rolled back),
 * and no scan in its plan may read the table through or throw away more than a few rows. The same
 * again with the journal hash-partitioned by run (hack/partition-journal.sql, docs/scaling.md),
 * where a query of one run's journal must also read one partition only (pruned by its run_id).
 */

const RUNS = 60_000;
/** Rows a scan may read and throw away (a filter after the index): a handful, never a table. */
const MAX_REMOVED = 200;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
const JOURNAL_PARTITION = /^journal_p\d+$/;

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe.each([
  { layout: 'as migrated', partitions: 0 },
  { layout: 'the journal in 8 hash partitions', partitions: 8 },
])('the store under 50,000 sleeping runs, $layout', ({ partitions }) => {
  let store: SqlStore;
  let admin: pg.Client;
  const sent: { sql: string; params: unknown[] }[] = [];

  beforeAll(async () => {
    const url = await server.createDatabase();
    store = await openPostgresStore(url);
    if (partitions) await partitionJournal(url, partitions);
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`
      insert into runs (id, project, workflow, interpreter, script, status, wait, wake_at, parent_id, created_at, finished_at)
      select 'k8s:p' || (i % 50) || ':run-' || lpad(i::text, 16, '0'), 'p' || (i % 50), 'w.sh', 'bash -eu', 'true',
             case when i % 12 = 0 then 'succeeded' when i % 97 = 0 then 'pending' else 'waiting' end,
             case when i % 10 = 1 then jsonb_build_object('kind', 'event', 'type', 't' || (i % 300))
                  when i % 10 = 2 then jsonb_build_object('kind', 'signal', 'name', 'go')
                  else jsonb_build_object('kind', 'timer') end,
             case when i % 10 in (1, 2) then null else now() + (i || ' seconds')::interval end,
             case when i % 7 = 0 then 'k8s:p0:run-' || lpad((i / 7)::text, 16, '0') end,
             now() - ((${RUNS} - i) || ' seconds')::interval,
             case when i % 12 = 0 then now() - interval '1 day' end
        from generate_series(1, ${RUNS}) as i`);
    await admin.query(`insert into journal (run_id, position, kind, verb, name, occurrence, data)
      select 'k8s:p' || (i % 50) || ':run-' || lpad(i::text, 16, '0'), p, 'call', 'step', 's' || p, 0, jsonb_build_object('label', 'L' || i)
        from generate_series(1, 20000) as i, generate_series(0, 4) as p`);
    await admin.query(`insert into events (id, project, type, subject, payload) select 'evt-' || i, 'p' || (i % 50), 't' || (i % 300), null, '{}'::jsonb from generate_series(1, 30000) as i`);
    await admin.query(`insert into signals (run_id, name, payload) select 'k8s:p' || (i % 50) || ':run-' || lpad(i::text, 16, '0'), 'go', '' from generate_series(1, 20000) as i`);
    await admin.query(`insert into leases (project, grp, run_id) select 'p' || (i % 50), 'g' || (i % 500), 'k8s:p' || (i % 50) || ':run-' || lpad(i::text, 16, '0') from generate_series(1, 20000) as i`);
    await admin.query(`insert into run_logs (run_id, pass, text) select 'k8s:p' || (i % 50) || ':run-' || lpad((i % 20000)::text, 16, '0'), 1, 'line' from generate_series(1, 40000) as i`);
    await admin.query(`insert into activities (id, run_id, name, argv, requires, max_attempts, backoff_ms, status, next_attempt_at)
      select 'act-' || i, 'k8s:p' || (i % 50) || ':run-' || lpad(i::text, 16, '0'), 'a', '["true"]'::jsonb, '["shell"]'::jsonb, 3, 1000,
             case when i % 100 = 0 then 'queued' else 'succeeded' end, now() + (i || ' seconds')::interval
        from generate_series(1, 20000) as i`);
    await admin.query(`insert into schedules (project, name, every_ms, workflow, interpreter, script, next_at)
      select 'p' || (i % 50), 's' || i, 300000, 'w.sh', 'bash -eu', 'true', now() + (i || ' seconds')::interval from generate_series(1, 5000) as i`);
    await admin.query('analyze');
    // What the store sends, outside transactions and in them.
    const db = (store as unknown as { db: SqlClient }).db;
    const recording = (client: SqlClient): SqlClient => ({
      ...client,
      query: <Row>(sql: string, params: unknown[] = []) => {
        sent.push({ sql, params });
        return client.query<Row>(sql, params);
      },
      transaction: <T>(fn: (tx: SqlClient) => Promise<T>) => client.transaction((tx) => fn(recording(tx))),
    });
    Object.assign(db, recording({ ...db }));
  }, 300_000);

  afterAll(async () => {
    await admin?.end();
    await store?.close();
  });

  const id = (i: number): string => `k8s:p${i % 50}:run-${String(i).padStart(16, '0')}`;
  const now = new Date();
  /** Not hot, but a search that finds its page early stops there: each run's journal is read through its key, never the whole journal hashed first (runs 1, 10-19, 100-139 are found by a step's label). */
  const SEARCH = 'pageRuns, oldest first, finding a step label (spool runs --search)';
  const CALLS: [string, (s: SqlStore) => Promise<unknown>][] = [
    ['listDueRuns (the executor, every tick)', (s) => s.listDueRuns(now, 16)],
    ['listDueRuns of 2 shards of 4 (a replica of a sharded operator, every tick)', (s) => s.listDueRuns(now, 16, { count: 4, owned: [1, 3] })],
    ['nextDueAt (the executor, every tick)', (s) => s.nextDueAt()],
    ['listEventWaiters (an event emitted)', (s) => s.listEventWaiters('p11', 't11')],
    ['findEvent (a wait.event)', (s) => s.findEvent('p11', 't11', 100, null)],
    ['getRun', (s) => s.getRun(id(4242))],
    ['listRuns by parent (a run family)', (s) => s.listRuns({ parentId: id(7), limit: 100 })],
    ['listRuns of a project, newest first (spool runs)', (s) => s.listRuns({ project: 'p3', limit: 50 })],
    ['listRuns, newest first (the run page)', (s) => s.listRuns({ limit: 50 })],
    ['pageRuns of a project, newest first (the runs list and its pages)', (s) => s.pageRuns({ project: 'p3', limit: 50 })],
    ['pageRuns, oldest first from a cursor (sort=created)', async (s) => s.pageRuns({ sort: 'created', limit: 50, before: (await s.pageRuns({ sort: 'created', limit: 50 })).next! })],
    ['pageRuns of a project and a status (a status chip)', (s) => s.pageRuns({ project: 'p3', status: ['waiting'], limit: 50 })],
    [SEARCH, (s) => s.pageRuns({ text: 'l1', sort: 'created', limit: 50 })],
    ['startPass of a run with a journal (every pass)', (s) => s.startPass(id(4243))],
    ['readJournal (every pass)', (s) => s.readJournal(id(4242))],
    ['appendJournal (every call)', (s) => s.appendJournal({ runId: id(4242), position: 5, kind: 'call', verb: 'sleep', name: '', occurrence: 0, data: {} })],
    ['readJournalTimes (the run page)', (s) => s.readJournalTimes(id(4242))],
    ['readLogs', (s) => s.readLogs(id(4242))],
    ['takeSignal (a wait.signal)', (s) => s.takeSignal(id(4242), 'go')],
    ['hasSignal', (s) => s.hasSignal(id(4242), 'go')],
    ['acquireLease (spool lock)', (s) => s.acquireLease('p1', 'g1', id(999_999))],
    ['finishRun (a run ends, leaving its lease queues)', (s) => s.finishRun(id(501), { status: 'succeeded', finishedAt: now })],
    ['claimActivity (the executor, every tick)', (s) => s.claimActivity(['shell'], now)],
    ['claimActivity of 2 shards of 4 (a replica of a sharded operator, every tick)', (s) => s.claimActivity(['shell'], now, { count: 4, owned: [0, 2] })],
    ['dueSchedules (the executor, every tick)', (s) => s.dueSchedules(now)],
    ['recoverInterruptedRuns (a new leader)', (s) => s.recoverInterruptedRuns(now)],
    ['listUnfinishedRunStates (the operator, its full sweep)', (s) => s.listUnfinishedRunStates('k8s:p3:')],
    [
      'listRunStatesChangedSince (the operator, its sweep every second)',
      async (s) => {
        const { readAt } = await s.listUnfinishedRunStates('k8s:p3:');
        await s.updateRun(id(4242), { error: null });
        const changed = await s.listRunStatesChangedSince('k8s:', readAt);
        expect(changed.states.map((state) => state.id)).toEqual([id(4242)]);
      },
    ],
  ];

  it('has the layout it is named for', async () => {
    const { rows } = await admin.query<{ n: string }>(`select count(*) as n from pg_inherits where inhparent = 'journal'::regclass`);
    expect(Number(rows[0]!.n)).toBe(partitions);
  });

  it.each(CALLS)('%s reads its rows through an index', async (name, call) => {
    sent.length = 0;
    await call(store);
    expect(sent.length).toBeGreaterThan(0);
    for (const { sql, params } of sent) {
      await admin.query('begin');
      try {
        const [row] = (await admin.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (analyze, format json) ${sql}`, params)).rows;
        const scans = nodesOf(row!['QUERY PLAN'][0]!.Plan).filter((node) => node['Relation Name']);
        for (const scan of scans) {
          const where = `${scan['Node Type']} on ${scan['Relation Name']}${scan['Index Name'] ? ` using ${scan['Index Name']}` : ''} in: ${sql.replace(/\s+/g, ' ')}`;
          expect(scan['Node Type'], where).not.toBe('Seq Scan');
          expect(scan['Rows Removed by Filter'] ?? 0, where).toBeLessThanOrEqual(MAX_REMOVED);
        }
        // Each of these reads or writes one run's journal: one partition, the others pruned (a search reads many runs', each by its key).
        if (name === SEARCH) continue;
        const partitionsRead = new Set(scans.map((scan) => scan['Relation Name']).filter((name) => JOURNAL_PARTITION.test(name!)));
        expect(partitionsRead.size, `journal partitions read by: ${sql.replace(/\s+/g, ' ')}`).toBeLessThanOrEqual(1);
      } finally {
        await admin.query('rollback');
      }
    }
  });
});
