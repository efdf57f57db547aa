import type { Migrated } from './migrate.js';
import type { Store } from './store.js';

export interface StoreOptions {
  /** A PostgreSQL server; when absent the embedded store is used. */
  databaseUrl?: string;
  /** Where the embedded store keeps its files (default `.spool/` in the working directory). */
  dataDir?: string;
  /** Told what the PostgreSQL server's schema migration did (the operator logs it: an upgrade's record). */
  onMigrated?: (migrated: Migrated) => void;
}

/** Drivers load lazily so a command pays only for the one it uses. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(options.databaseUrl, { onMigrated: options.onMigrated });
  }
  const { openPgliteStore } = await import('./pglite.js');
  return openPgliteStore(options.dataDir ?? '.spool');
}
