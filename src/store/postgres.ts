import pg from 'pg';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql.js';
import { SqlStore } from './sql-store.js';

type Queryable = pg.Pool | pg.PoolClient;

function clientOf(db: Queryable, inTransaction: boolean): SqlClient {
  return {
    async query<Row>(sql: string, params?: unknown[]): Promise<Row[]> {
      const result = await db.query(sql, params);
      return result.rows as Row[];
    },
    async exec(sql: string): Promise<void> {
      await db.query(sql);
    },
    async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
      if (inTransaction) return fn(this);
      const client = await (db as pg.Pool).connect();
      try {
        await client.query('begin');
        const value = await fn(clientOf(client, true));
        await client.query('commit');
        return value;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async close(): Promise<void> {
      if (!inTransaction) await (db as pg.Pool).end();
    },
  };
}

/** The PostgreSQL server driver: one pool per process. */
export async function openPostgresStore(url: string, options: { max?: number } = {}): Promise<SqlStore> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  pool.on('error', () => undefined); // an idle client's lost connection is replaced on next use
  const db = clientOf(pool, false);
  await migrate(db);
  return new SqlStore(db);
}
