import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { cliOk, journalOf, poll, submit, waitForRun } from '../support/dev.js';
import { partitionJournal } from '../support/partition-journal.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { removeTempDirs, tempDir } from '../support/spool.js';

/**
 * The journal hash-partitioned by run (hack/partition-journal.sql, docs/scaling.md) under a real
 * run: steps, a sleep and a signal, each pass in a new, empty working directory, so every pass
 * after the first replays the journal it reads from its partition. The store's contract on this
 * layout is in test/store.contract.test.ts, the hot queries' plans in hot-queries.test.ts.
 */
describe('spool dev on PostgreSQL with the journal in hash partitions', () => {
  let postgres: TestPostgres;
  let dev: DevServer;
  let admin: pg.Client;
  let url: string;

  beforeAll(async () => {
    postgres = await startPostgres();
    url = postgres.url;
    // A journal with a run in it already: the script keeps its rows.
    const store = await openPostgresStore(url);
    await store.createRun({ id: 'dev:default:run-before0000000000', project: 'default', workflow: 'w.sh', interpreter: 'bash', script: 'true' });
    await store.appendJournal({ runId: 'dev:default:run-before0000000000', position: 0, kind: 'call', verb: 'sleep', name: '', occurrence: 0, data: { until: '2030-01-01T00:00:00.000Z' } });
    await store.close();
    await partitionJournal(url, 4);
    // Run again, it changes nothing.
    await partitionJournal(url, 4);
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    dev = await startDevServer({ port: 0, dataDir: join(tempDir('spool-partitioned-'), 'data'), databaseUrl: url, pollMs: 50, freshDir: true });
  }, 120_000);

  afterAll(async () => {
    await dev?.close();
    await admin?.end();
    await postgres?.stop();
    removeTempDirs();
  });

  it('is a table of 4 partitions by run_id that kept the rows it had', async () => {
    const partitions = await admin.query<{ name: string; rows: string }>(
      `select c.relname as name, (select count(*) from journal j where j.tableoid = c.oid) as rows
         from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'journal'::regclass order by 1`,
    );
    expect(partitions.rows.map((row) => row.name)).toEqual(['journal_p0', 'journal_p1', 'journal_p2', 'journal_p3']);
    expect(partitions.rows.reduce((sum, row) => sum + Number(row.rows), 0)).toBe(1);
    const key = await admin.query<{ key: string }>(`select pg_get_partkeydef('journal'::regclass) as key`);
    expect(key.rows[0]!.key).toBe('HASH (run_id)');
  });

  it('given a run of steps, a sleep and a signal, each pass in a fresh directory, then each step runs once and the journal is in one partition', async () => {
    const dir = tempDir('spool-partitioned-run-');
    const marks = join(dir, 'marks');
    writeFileSync(
      join(dir, 'flow.sh'),
      [
        `a=$(spool step first -- sh -c 'echo first >> ${marks}; echo one')`,
        'spool sleep 1s',
        'got=$(spool wait signal go --timeout 5m)',
        `b=$(spool step second -- sh -c "echo second >> ${marks}; echo $a-$got")`,
        'test "$b" = one-two',
        '',
      ].join('\n'),
    );
    const id = await submit(dev.url, dir, 'flow.sh');
    await waitForRun(dev.url, id, ['waiting'], 60_000);
    await poll('the run to wait for its signal', async () => (await journalOf(dev.url, id)).some((entry) => entry.verb === 'wait.signal'), 60_000);
    await cliOk(dev.url, dir, ['signal', id, 'go', 'two']);
    const run = await waitForRun(dev.url, id, ['succeeded'], 60_000);
    expect(run.passes).toBeGreaterThanOrEqual(3);
    expect(readFileSync(marks, 'utf8')).toBe('first\nsecond\n');
    const journal = await journalOf(dev.url, id);
    expect(journal.filter((entry) => entry.kind === 'call').map((entry) => `${entry.verb} ${entry.name}`.trim())).toEqual(['step first', 'sleep', 'wait.signal go', 'step second']);
    const where = await admin.query<{ partitions: string; rows: string; outside: string }>(
      `select count(distinct tableoid) as partitions, count(*) as rows, (select count(*) from only journal) as outside
         from journal where run_id = $1`,
      [id],
    );
    expect(where.rows[0]).toEqual({ partitions: '1', rows: '8', outside: '0' });
  });
});
