// Schema migrations on a real PostgreSQL server when several processes start at once, as two
// operator replicas do during an upgrade: each migration is applied exactly once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationFiles, type Migration } from '../../src/store/migrate.js';
import type { SqlClient } from '../../src/store/sql.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/** A SqlClient on its own pg connection: one migrating process. */
async function connect(url: string): Promise<SqlClient & { end(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const self: SqlClient & { end(): Promise<void> } = {
    query: async <Row>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as Row[],
    exec: async (sql: string) => void (await client.query(sql)),
    transaction: async (fn) => {
      await client.query('begin');
      try {
        const result = await fn(self);
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback');
        throw error;
      }
    },
    close: () => client.end(),
    end: () => client.end(),
  };
  return self;
}

/**
 * Migrations that count how often they ran: each appends a row to a table (a migration applied
 * twice leaves two rows) and sleeps, so that without the lock both processes would be inside it at
 * once.
 */
const counting: Migration[] = [1, 2, 3].map((version) => ({
  version,
  name: `00${version}_counting.sql`,
  sql: `create table if not exists migration_runs (version integer not null, at timestamptz not null default clock_timestamp());
        select pg_sleep(0.3);
        insert into migration_runs (version) values (${version});`,
}));

describe('migrate on PostgreSQL', () => {
  let postgres: TestPostgres;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it('given two processes migrating an empty database at once, then each migration is applied once and both succeed', async () => {
    const url = await postgres.createDatabase();
    const [one, two] = await Promise.all([connect(url), connect(url)]);
    try {
      const [first, second] = await Promise.all([migrate(one, counting), migrate(two, counting)]);
      // Between them they applied each migration once (which one applied which depends on who got the lock).
      expect([...first.applied, ...second.applied].sort()).toEqual(counting.map((m) => m.name));
      const runs = await one.query<{ version: number; count: string }>(
        'select version, count(*) as count from migration_runs group by version order by version',
      );
      expect(runs.map((row) => [row.version, Number(row.count)])).toEqual([
        [1, 1],
        [2, 1],
        [3, 1],
      ]);
      // A third start finds nothing to do.
      expect(await migrate(one, counting)).toEqual({ applied: [], unknown: [] });
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
  });

  it('given the real migrations applied by two processes at once, then the schema is complete and recorded once per file', async () => {
    const url = await postgres.createDatabase();
    const [one, two] = await Promise.all([connect(url), connect(url)]);
    try {
      const results = await Promise.all([migrate(one), migrate(two)]);
      const files = migrationFiles().map((m) => m.name);
      expect(results.flatMap((r) => r.applied).sort()).toEqual(files);
      const recorded = await one.query<{ name: string }>('select name from schema_migrations order by version');
      expect(recorded.map((row) => row.name)).toEqual(files);
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
  });

  it('given a database a newer release migrated further (a rollback), then an older release applies nothing and names what it does not know', async () => {
    const url = await postgres.createDatabase();
    const db = await connect(url);
    try {
      await migrate(db, counting);
      expect(await migrate(db, counting.slice(0, 2))).toEqual({ applied: [], unknown: ['003_counting.sql'] });
    } finally {
      await db.end();
    }
  });
});
