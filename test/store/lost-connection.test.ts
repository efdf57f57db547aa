import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { StoreUnavailableError } from '../../src/store/unavailable.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * A connection lost in the middle of a transaction, between two of its statements: what a restart
 * of PostgreSQL does to the operator's sweep, which reads in a transaction every second.
 */
describe('a transaction whose connection the server ends between two statements', () => {
  let postgres: TestPostgres;
  let store: SqlStore;

  beforeAll(async () => {
    postgres = await startPostgres();
    store = await openPostgresStore(postgres.url);
  }, 60_000);

  afterAll(async () => {
    await store.close();
    await postgres.stop();
  });

  // Unheard, the client's error event was an uncaught exception: vitest fails the file for it, and
  // the operator's process ended.
  it('then the transaction fails as unavailable, nothing is thrown elsewhere, and the store carries on', async () => {
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    try {
      const failure = await store
        .transaction(async (tx) => {
          await tx.getRun('dev:default:run-none');
          await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
          // Long enough for the client to read the server's goodbye while no statement waits.
          await new Promise((resolve) => setTimeout(resolve, 300));
          return tx.getRun('dev:default:run-none');
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect(await store.getRun('dev:default:run-none')).toBeNull();
    } finally {
      await admin.end();
    }
  }, 30_000);
});
