import { RetryableError, UsageError } from '../common/errors.js';
import type { BlobBackend } from './artifacts/types.js';
import { artifactsLocation, type ArtifactsFlags } from './artifacts/s3/location.js';
import type { Migrated } from './migrate.js';
import type { Store } from './store.js';

export interface StoreOptions extends ArtifactsFlags {
  /** A PostgreSQL server; when absent the embedded store is used. */
  databaseUrl?: string;
  /** Where the embedded store keeps its files (default `.spool/` in the working directory). */
  dataDir?: string;
  /** Told what the PostgreSQL server's schema migration did (the operator logs it: an upgrade's record). */
  onMigrated?: (migrated: Migrated) => void;
}

/** Drivers load lazily so a command pays only for the one it uses. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const blobs = await openBlobs(options);
  if (options.databaseUrl) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(options.databaseUrl, { onMigrated: options.onMigrated, ...(blobs ? { blobs } : {}) });
  }
  const { openPgliteStore } = await import('./pglite.js');
  return openPgliteStore(options.dataDir ?? '.spool', blobs);
}

/**
 * `--artifacts s3://...`: the bucket is checked before anything starts, so a wrong bucket, endpoint
 * or key is one line at start-up rather than a failed put hours later. Undefined: rows of the store.
 */
async function openBlobs(options: StoreOptions): Promise<BlobBackend | undefined> {
  const location = artifactsLocation(options);
  if (!location) return undefined;
  const { S3Blobs } = await import('./artifacts/s3/s3-blobs.js');
  const blobs = new S3Blobs(location);
  try {
    await blobs.check();
  } catch (error) {
    blobs.close();
    const message = `--artifacts ${blobs.describe()}: ${error instanceof Error ? error.message : String(error)}`;
    // A 4xx (no such bucket, a wrong key) is final; no answer or a 5xx may pass (the server starting).
    throw (error as { final?: boolean }).final ? new UsageError(message) : new ArtifactsUnreachableError(message);
  }
  return blobs;
}

/**
 * The artifact store did not answer, or answered 5xx, at start-up: retryable, so the operator waits
 * for it (it may be starting beside the operator), the server answers 503 with Retry-After, and a
 * command says so in one line and exits 69, as for a database that is away (a wrong address is a
 * 4xx or a name that does not resolve the same way: the message names the endpoint either way).
 */
export class ArtifactsUnreachableError extends RetryableError {
  constructor(message: string) {
    super('unavailable', message);
  }
}
