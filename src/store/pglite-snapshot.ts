import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, normalize, sep } from 'node:path';
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
  /** Of what made it (snapshotInputs): a build whose inputs are the same keeps it. */
  inputs?: string;
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
  const manifest: Manifest = { pglite: pgliteVersion(), sha256: sha256(gzipped), inputs: snapshotInputs(dir) };
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * What a snapshot is made from, as one hash: the PGlite installed, the migrations beside it and
 * the code that makes it (this module and pglite.js, compiled beside it in dist/store).
 */
export function snapshotInputs(dir = SNAPSHOT_DIR): string {
  const hash = createHash('sha256').update(pgliteVersion());
  const migrations = join(dir, 'migrations');
  const files = [
    ...readdirSync(migrations)
      .filter((name) => name.endsWith('.sql'))
      .sort()
      .map((name) => join(migrations, name)),
    ...['pglite.js', 'pglite-snapshot.js'].map((name) => join(dir, name)),
  ];
  for (const file of files) hash.update(`\0${basename(file)}\0`).update(readFileSync(file));
  return hash.digest('hex');
}

/** The snapshot in dir was made from what is there now, and is whole: a build may keep it (8 s saved). */
export function snapshotUpToDate(dir = SNAPSHOT_DIR): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
    return manifest.inputs === snapshotInputs(dir) && manifest.sha256 === sha256(readFileSync(join(dir, TARBALL)));
  } catch {
    return false;
  }
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
  return new Blob([snapshotTar(dir) as Uint8Array<ArrayBuffer>]);
}

/**
 * Unpacks the snapshot into a new data directory on disk, for PGlite to open as it opens any
 * existing one. Given to loadDataDir instead, the tarball is unpacked inside PGlite's WebAssembly
 * memory, which never shrinks: a server started on a new data directory held ~180 MiB more for its
 * whole life than one started on an existing directory.
 */
export function unpackSnapshot(dataDir: string, dir = SNAPSHOT_DIR): void {
  extractTar(snapshotTar(dir), dataDir);
}

function snapshotTar(dir: string): Buffer {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
  const version = pgliteVersion();
  if (manifest.pglite !== version)
    throw new Error(`it was made by PGlite ${String(manifest.pglite)}, this is ${version}`);
  const gzipped = readFileSync(join(dir, TARBALL));
  if (sha256(gzipped) !== manifest.sha256) throw new Error(`${join(dir, TARBALL)} is damaged`);
  return gunzipSync(gzipped, { chunkSize: Math.max(unpackedSize(gzipped), MAPPED_ON_ITS_OWN) });
}

/**
 * glibc's malloc maps a block on its own (and unmaps it when freed) only above its mmap threshold,
 * which grows with the blocks freed up to 32 MiB on 64-bit: a smaller tarball (25 MB since the
 * template databases went) could come from the heap instead and stay resident after it is freed.
 * A buffer past that maximum is always mapped; the pages zlib never writes cost nothing.
 */
const MAPPED_ON_ITS_OWN = 33 * 1024 * 1024;

/**
 * The unpacked size a gzip member's trailer gives (ISIZE, modulo 4 GiB). Unpacked into one buffer
 * of that size, the tarball is one allocation the C library maps on its own and unmaps when it is
 * freed. In zlib's default 16 KiB chunks it was thousands of small ones from the C heap, which
 * kept the 41 MB for the life of the process (a `spool dev` started on a new data directory held
 * ~28 MiB more than one started on an existing directory).
 */
function unpackedSize(gzipped: Buffer): number {
  return gzipped.length >= 4 ? gzipped.readUInt32LE(gzipped.length - 4) : 0;
}

/**
 * Writes the directories and files of a tarball (as PGlite's dumpDataDir makes them: ustar, only
 * directories and regular files) under `into`. Anything else, or a path that would leave `into`,
 * is refused: the snapshot is then not used.
 */
function extractTar(tar: Buffer, into: string): void {
  const text = (at: number, length: number): string => tar.toString('latin1', at, at + length).replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = text(at, 100);
    if (name === '') break; // the two zero blocks that end a tarball
    const prefix = text(at + 257, 6) === 'ustar' ? text(at + 345, 155) : '';
    const path = normalize(join(into, prefix, name));
    if (path !== into && !path.startsWith(into + sep)) throw new Error(`the snapshot names a path outside the data directory: ${name}`);
    const size = Number.parseInt(text(at + 124, 12).trim() || '0', 8);
    const mode = Number.parseInt(text(at + 100, 8).trim() || '600', 8);
    const type = text(at + 156, 1);
    if (type === '5') mkdirSync(path, { recursive: true, mode: mode | 0o700 });
    else if (type === '0' || type === '') {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, tar.subarray(at + 512, at + 512 + size), { mode });
    } else throw new Error(`the snapshot holds an entry of type '${type}' (${name}), not a file or a directory`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
}
