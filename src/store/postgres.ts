import pg from 'pg';
import { ensureError } from '../common/errors.js';
import { migrate, type Migrated } from './migrate.js';
import { isUnavailable, storeError, StoreUnavailableError } from './unavailable.js';
import type { BlobBackend } from './artifacts/types.js';
import type { SqlClient } from './sql.js';
import { SqlStore } from './sql-store.js';

type Queryable = pg.Pool | pg.PoolClient;

function clientOf(db: Queryable, inTransaction: boolean): SqlClient {
  return {
    async query<Row>(sql: string, params?: unknown[]): Promise<Row[]> {
      try {
        const result = await db.query(sql, params);
        return result.rows as Row[];
      } catch (error) {
        throw storeError(error);
      }
    },
    async exec(sql: string): Promise<void> {
      try {
        await db.query(sql);
      } catch (error) {
        throw storeError(error);
      }
    },
    async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
      if (inTransaction) return fn(this);
      const client = await (db as pg.Pool).connect().catch((error: unknown) => Promise.reject(ensureError(storeError(error))));
      let broken: Error | undefined;
      // A checked-out client is ours to listen to: the pool's own listener is for idle ones. A
      // server that goes between two statements (a restart) makes the client emit an error no
      // statement is waiting for, and unheard it was an uncaught exception that ended the process
      // (CI, 2026-12-06: ECONNRESET in database-restart.test.ts). The next statement fails with it.
      const lost = (error: Error): void => {
        broken = error;
      };
      client.on('error', lost);
      try {
        await client.query('begin');
        const value = await fn(clientOf(client, true));
        await client.query('commit');
        return value;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        // A connection the server dropped is not given back to the pool for the next caller.
        if (isUnavailable(error) || error instanceof StoreUnavailableError) broken = ensureError(error);
        throw storeError(error);
      } finally {
        client.off('error', lost);
        client.release(broken);
      }
    },
    async close(): Promise<void> {
      if (!inTransaction) await (db as pg.Pool).end();
    },
  };
}

/** How long to wait for a connection to the database (connect and its start-up exchange). */
const CONNECT_TIMEOUT_MS = 10_000;

/** The PostgreSQL server driver: one pool per process. */
export async function openPostgresStore(
  url: string,
  options: { max?: number; onMigrated?: (migrated: Migrated) => void; blobs?: BlobBackend } = {},
): Promise<SqlStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // A database pod that went away can leave its address routed to nothing for a while (its
    // Service's endpoints lag): a connection attempt would hang for the kernel's SYN retries
    // (about two minutes) and hold every caller queued behind the pool. Given up sooner, it is
    // "unavailable" (a 503, a retry), and keepalives find a connection whose server vanished.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  pool.on('error', () => undefined); // an idle client's lost connection is replaced on next use
  const db = clientOf(pool, false);
  // Not `onMigrated?.(await migrate(db))`: an optional call skips its arguments, migrations and all.
  const migrated = await migrate(db).catch(async (error: unknown) => {
    await pool.end(); // the caller may try again with a new pool (a database not up yet)
    throw error;
  });
  options.onMigrated?.(migrated);
  return new SqlStore(db, options.blobs);
}
