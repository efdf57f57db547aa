import type { Store } from './store.js';

export interface StoreOptions {
  /** A PostgreSQL server; when absent the embedded store is used. */
  databaseUrl?: string;
  /** Where the embedded store keeps its files (default `.spool/` in the working directory). */
  dataDir?: string;
}

/** Drivers load lazily so a command pays only for the one it uses. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(options.databaseUrl);
  }
  const { openPgliteStore } = await import('./pglite.js');
  return openPgliteStore(options.dataDir ?? '.spool');
}
