import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions, type Transaction } from '@electric-sql/pglite';
import { UsageError } from '../common/errors.js';
import { migrate } from './migrate.js';
import { readSnapshot, unpackSnapshot, snapshotUnusable, writeSnapshot } from './pglite-snapshot.js';
import type { BlobBackend } from './artifacts/types.js';
import type { SqlClient } from './sql.js';
import { SqlStore } from './sql-store.js';

type Queryable = PGlite | Transaction;

function clientOf(db: Queryable, root: PGlite, onClose: () => void): SqlClient {
  const inTransaction = db !== root;
  return {
    async query<Row>(sql: string, params?: unknown[]): Promise<Row[]> {
      const result = await db.query<Row>(sql, params);
      return result.rows;
    },
    async exec(sql: string): Promise<void> {
      await db.exec(sql);
    },
    async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
      if (inTransaction) return fn(this);
      return root.transaction((tx) => fn(clientOf(tx, root, onClose)));
    },
    async close(): Promise<void> {
      if (inTransaction) return;
      await root.close();
      onClose();
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite takes no lock of its own, and two processes writing one data directory corrupt it, so a
 * pid file guards it; a file left by a process that died is taken over.
 */
function lockDataDir(dir: string): () => void {
  const lockFile = join(dir, 'spool.pid');
  let holder = Number.NaN;
  try {
    holder = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
  } catch {
    // no lock file: free
  }
  if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
    throw new UsageError(
      `data directory ${dir} is in use by process ${holder}; wait for it to finish or pass another --data-dir`,
    );
  }
  writeFileSync(lockFile, String(process.pid));
  return () => rmSync(lockFile, { force: true });
}

/** PostgreSQL's type oid of bytea. */
const BYTEA = 17;

/**
 * bytea to and from its hex text through Buffer. PGlite's own converters go a byte at a time through
 * a JS string each, about 200 ms for an artifact's 512 KiB part; these take a few (6× faster to
 * write, 12× to read, docs/benchmarks.md).
 */
const BYTEA_TEXT: Pick<PGliteOptions, 'serializers' | 'parsers'> = {
  serializers: { [BYTEA]: (bytes: Uint8Array) => `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}` },
  parsers: {
    [BYTEA]: (text: string) => {
      const bytes = Buffer.from(text.slice(2), 'hex');
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  },
};

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * PGlite's PostgreSQL is 9 MB of WebAssembly. V8 compiles it with its baseline compiler (Liftoff),
 * then compiles the functions it finds hot again with TurboFan on background threads: in a `spool
 * run` of a second or two that second compile was half the CPU and 100 MiB of the peak memory, and
 * had not paid for itself after 150 steps (docs/benchmarks.md). Read when a module is compiled, so
 * set before the first; it concerns WebAssembly only, and PGlite's is the only WebAssembly here.
 */
setFlagsFromString('--liftoff-only');

/**
 * A new data directory (absent or empty) and an in-memory database start from the ready-made one
 * (pglite-snapshot.ts) rather than running initdb; an existing one opens as it is. Without a usable
 * snapshot, initdb runs as before.
 */
async function createPglite(dataDir?: string): Promise<PGlite> {
  const options: PGliteOptions = dataDir ? { dataDir, ...BYTEA_TEXT } : { ...BYTEA_TEXT };
  if (dataDir && existsSync(dataDir) && readdirSync(dataDir).length > 0) return PGlite.create(options);
  if (dataDir) return createOnDisk(dataDir);
  let snapshot: Blob;
  try {
    snapshot = readSnapshot();
  } catch (error) {
    snapshotUnusable(messageOf(error));
    return PGlite.create(options);
  }
  const start: PGliteOptions = { ...options, loadDataDir: snapshot };
  try {
    return await PGlite.create(start);
  } catch (error) {
    snapshotUnusable(`PGlite could not start from it: ${messageOf(error)}`);
    return PGlite.create(options);
  } finally {
    // PGlite keeps the options it was given as long as it is open: without this, the unpacked
    // tarball (~40 MB) stays in memory for the life of the store, long after it was copied in.
    delete start.loadDataDir;
  }
}

/** A new data directory: the snapshot unpacked into it on disk (unpackSnapshot), else initdb. */
async function createOnDisk(dataDir: string): Promise<PGlite> {
  try {
    unpackSnapshot(dataDir);
    return await PGlite.create({ dataDir, ...BYTEA_TEXT }).catch((error: unknown) => {
      throw new Error(`PGlite could not start from it: ${messageOf(error)}`);
    });
  } catch (error) {
    snapshotUnusable(messageOf(error));
    // It was absent or empty: all there is in it now is what the snapshot left.
    rmSync(dataDir, { recursive: true, force: true });
    return PGlite.create({ dataDir, ...BYTEA_TEXT });
  }
}

/** The embedded driver: PostgreSQL compiled to WebAssembly, keeping its files under `dataDir`. */
export async function openPgliteStore(dataDir?: string, blobs?: BlobBackend): Promise<SqlStore> {
  let unlock = (): void => undefined;
  let root: PGlite;
  if (dataDir) {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    unlock = lockDataDir(dir);
    root = await createPglite(join(dir, 'pgdata'));
  } else {
    root = await createPglite();
  }
  const db = clientOf(root, root, unlock);
  await migrate(db);
  return new SqlStore(db, blobs);
}

/** Makes the snapshot (`npm run build`): a data directory initdb made, with the migrations applied. */
export async function makeSnapshot(dir?: string): Promise<void> {
  const root = await PGlite.create();
  try {
    await migrate(clientOf(root, root, () => undefined));
    // PGlite's 128 MB of shared buffers fill with copies of pages its files already hold (on disk,
    // cached by the OS, or in memory), and WebAssembly memory once grown is never given back: 32 MB
    // kept ~100 MiB less resident after 5,000 writes, at the same speed (docs/benchmarks.md); 16 MB
    // another ~20 MiB less at a first spool run's peak (273 -> 252 MiB, issue 32).
    await root.exec(`alter system set shared_buffers = '16MB'`);
    // initdb's template databases are 600 of the snapshot's 1,058 files, each one a file a first
    // run creates (ext4's open(O_CREAT) was a quarter of that run's CPU profile). Nothing makes a
    // database in the embedded store, the only one it connects to is `postgres`, and no one else
    // connects to it: they go.
    await root.exec(`update pg_database set datistemplate = false where datname in ('template0', 'template1')`);
    await root.exec('drop database template0');
    await root.exec('drop database template1');
    // Flushed to the data files, so a store started from it has no WAL to replay.
    await root.exec('checkpoint');
    const tar = await root.dumpDataDir('none');
    writeSnapshot(new Uint8Array(await tar.arrayBuffer()), dir);
  } finally {
    await root.close();
  }
}
