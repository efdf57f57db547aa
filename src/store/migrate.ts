import { readdirSync, readFileSync } from 'node:fs';
import type { SqlClient } from './sql.js';

// Beside this module: src/store/migrations in tests, dist/store/migrations (copied there by
// `npm run build`) in the built CLI and in images, which ship dist/ and not src/.
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export function migrationFiles(): { version: number; name: string; sql: string }[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({
      version: Number.parseInt(name, 10),
      name,
      sql: readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'),
    }));
}

/** Applies the migrations not yet applied, each in its own transaction; safe with several processes. */
export async function migrate(db: SqlClient): Promise<void> {
  await db.query(`create table if not exists schema_migrations (version integer primary key, name text not null,
                    applied_at timestamptz not null default now())`);
  for (const migration of migrationFiles()) {
    await db.transaction(async (tx) => {
      await tx.query(`select pg_advisory_xact_lock(7271901)`);
      const done = await tx.query(`select 1 from schema_migrations where version = $1`, [migration.version]);
      if (done.length > 0) return;
      await tx.exec(migration.sql);
      await tx.query(`insert into schema_migrations (version, name) values ($1, $2)`, [migration.version, migration.name]);
    });
  }
}
