import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * A ready-made embedded data directory: initdb run and the store's migrations applied at build time
 * (`npm run build`, scripts/pglite-snapshot.mjs), so a new data directory, and every in-memory
 * store (`spool test`, `spool replay`), is unpacked in about a second instead of running initdb in
 * WebAssembly for several seconds (and twice the memory). It lives in dist/store; this path finds
 * it from dist/store and from src/store (the tests) alike.
 */
export const SNAPSHOT_DIR = fileURLToPath(new URL('../../dist/store/', import.meta.url));
const TARBALL = 'pglite-snapshot.tar.gz';
const MANIFEST = 'pglite-snapshot.json';

interface Manifest {
  /** The PGlite that made it: another one's data directory may not be one this PGlite can start. */
  pglite: string;
  /** Of the tarball, so a damaged file is refused before PGlite is handed it. */
  sha256: string;
}

export function pgliteVersion(): string {
  // The package's exports hide its package.json; it sits one level above its entry point (dist/).
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return (JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Writes the snapshot (an uncompressed tarball from PGlite's dumpDataDir) and its manifest into dir. */
export function writeSnapshot(tar: Uint8Array, dir = SNAPSHOT_DIR): void {
  const gzipped = gzipSync(tar);
  writeFileSync(join(dir, TARBALL), gzipped);
  const manifest: Manifest = { pglite: pgliteVersion(), sha256: sha256(gzipped) };
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

let warned = false;
/** Initialising without the snapshot works, only slower: said once per process, never a failure. */
export function snapshotUnusable(reason: string): void {
  if (warned) return;
  warned = true;
  process.stderr.write(
    `spool: not using the ready-made embedded data directory (${reason}); initialising one, which takes a few seconds\n`,
  );
}

/**
 * The snapshot as PGlite's loadDataDir takes it (unpacked here: Node's zlib is faster than
 * PGlite's); throws, saying why, when it is absent, damaged, or made by another PGlite.
 */
export function readSnapshot(dir = SNAPSHOT_DIR): Blob {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
  const version = pgliteVersion();
  if (manifest.pglite !== version)
    throw new Error(`it was made by PGlite ${String(manifest.pglite)}, this is ${version}`);
  const gzipped = readFileSync(join(dir, TARBALL));
  if (sha256(gzipped) !== manifest.sha256) throw new Error(`${join(dir, TARBALL)} is damaged`);
  return new Blob([gunzipSync(gzipped)]);
}
