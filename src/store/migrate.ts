import { readdirSync, readFileSync } from 'node:fs';
import type { SqlClient } from './sql.js';

// Beside this module: src/store/migrations in tests, dist/store/migrations (copied there by
// `npm run build`) in the built CLI and in images, which ship dist/ and not src/.
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Any number: every process that migrates this schema takes the same PostgreSQL advisory lock. */
const MIGRATION_LOCK = 7271901;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function migrationFiles(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({
      version: Number.parseInt(name, 10),
      name,
      sql: readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'),
    }));
}

export interface Migrated {
  /** The migrations this call applied (none when another process had applied them all). */
  applied: string[];
  /** Migrations the database has that this release does not know: a newer release applied them (a rollback). */
  unknown: string[];
}

/**
 * Applies the migrations not yet applied, each in its own transaction, once however many processes
 * start at the same time (two operator replicas during an upgrade): each transaction first takes
 * the advisory lock, so a second process waits for the first's migration to commit, then finds it
 * recorded and skips it. The bookkeeping table is created under the lock too: two concurrent
 * `create table if not exists` can both try to create it, and one fails on pg_type's unique index.
 */
export async function migrate(db: SqlClient, migrations: Migration[] = migrationFiles()): Promise<Migrated> {
  const applied: string[] = [];
  const locked = async (fn: (tx: SqlClient) => Promise<void>): Promise<void> =>
    db.transaction(async (tx) => {
      await tx.query(`select pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await fn(tx);
    });
  await locked((tx) =>
    tx.exec(`create table if not exists schema_migrations (version integer primary key, name text not null,
               applied_at timestamptz not null default now())`),
  );
  for (const migration of migrations) {
    await locked(async (tx) => {
      const done = await tx.query(`select 1 from schema_migrations where version = $1`, [migration.version]);
      if (done.length > 0) return;
      await tx.exec(migration.sql);
      await tx.query(`insert into schema_migrations (version, name) values ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.name);
    });
  }
  const known = new Set(migrations.map((migration) => migration.version));
  const recorded = await db.query<{ version: number; name: string }>(
    `select version, name from schema_migrations order by version`,
  );
  return { applied, unknown: recorded.filter((row) => !known.has(row.version)).map((row) => row.name) };
}
