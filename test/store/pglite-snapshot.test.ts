// The ready-made embedded data directory (`npm run build` makes it in dist/store: build first): new
// data directories and in-memory stores start from it instead of running initdb; an existing data
// directory opens as it is; a snapshot this PGlite did not make, or a damaged one, is refused and
// initdb runs instead, said once on stderr.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationFiles } from '../../src/store/migrate.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import { readSnapshot, SNAPSHOT_DIR, snapshotUpToDate, writeSnapshot } from '../../src/store/pglite-snapshot.js';
import type { SqlClient } from '../../src/store/sql.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { removeTempDirs, spool, tempDir } from '../support/spool.js';

afterAll(removeTempDirs);

const ROOT = join(SNAPSHOT_DIR, '..', '..');
const latest = Math.max(...migrationFiles().map((migration) => migration.version));
const sqlOf = (store: SqlStore): SqlClient => (store as unknown as { db: SqlClient }).db;

/** The migrations the store has, and whether all were applied before `since` (at build time). */
async function schemaOf(store: SqlStore, since: Date): Promise<{ latest: number; allBefore: boolean }> {
  const [row] = await sqlOf(store).query<{ latest: number; newest: Date }>(
    'select max(version) as latest, max(applied_at) as newest from schema_migrations',
  );
  return { latest: row!.latest, allBefore: row!.newest < since };
}

async function worksAsAStore(store: SqlStore, id: string): Promise<void> {
  const { created } = await store.createRun({ id, project: 'p', workflow: 'w', interpreter: 'bash', script: 'true' });
  expect(created).toBe(true);
  expect((await store.getRun(id))?.status).toBe('pending');
}

describe('the ready-made embedded data directory', () => {
  it('starts a new data directory at the latest migration, applied at build time, and it works as a store', async () => {
    const since = new Date();
    const store = await openPgliteStore(join(tempDir(), '.spool'));
    try {
      expect(await schemaOf(store, since)).toEqual({ latest, allBefore: true });
      await worksAsAStore(store, 'r1');
      // Set in the snapshot: fewer buffers than PGlite's default, so less memory held (see makeSnapshot).
      expect(await sqlOf(store).query('show shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
      // Without initdb's template databases: 600 files fewer for a first run to create.
      expect(await sqlOf(store).query('select datname from pg_database')).toEqual([{ datname: 'postgres' }]);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('starts an empty data directory and an in-memory store from it too', async () => {
    const since = new Date();
    const dir = join(tempDir(), '.spool');
    mkdirSync(join(dir, 'pgdata'), { recursive: true });
    for (const store of [await openPgliteStore(dir), await openPgliteStore()]) {
      try {
        expect(await schemaOf(store, since)).toEqual({ latest, allBefore: true });
        await worksAsAStore(store, 'r1');
      } finally {
        await store.close();
      }
    }
  }, 120_000);

  it('opens an existing data directory as it is: its data stays', async () => {
    const dir = join(tempDir(), '.spool');
    const first = await openPgliteStore(dir);
    await worksAsAStore(first, 'kept');
    await first.close();
    const again = await openPgliteStore(dir);
    try {
      expect((await again.getRun('kept'))?.id).toBe('kept');
    } finally {
      await again.close();
    }
  }, 120_000);

  it('lets go of the unpacked snapshot once the store is open', () => {
    // What ArrayBuffers hold, after a full collection, is PGlite's working memory, and no longer
    // the tarball it was started from.
    const held = memoryOnceOpen(join(tempDir(), '.spool')).arrayBuffers;
    const tarball = readSnapshot().size;
    expect(tarball).toBeGreaterThan(8 * 1024 * 1024);
    expect(held).toBeLessThan(tarball / 2);
  }, 120_000);

  it('starts a new data directory as light as an existing one: the snapshot is unpacked on disk, not in PGlite\'s memory', () => {
    // PGlite's WebAssembly memory never shrinks: what it held to unpack the tarball, it held for
    // the life of the store (a spool dev started on a new data directory: ~430 MiB, ~250 on an old one).
    const dir = join(tempDir(), '.spool');
    const fresh = memoryOnceOpen(dir);
    const existing = memoryOnceOpen(dir);
    expect(fresh.arrayBuffers).toBeLessThan(existing.arrayBuffers * 1.25);
    // Nor in the C heap, which never shrinks below a block still in use: the 41 MB tarball gunzipped
    // in zlib's 16 KiB chunks stayed resident there for the life of the process.
    expect(fresh.cHeap - existing.cHeap).toBeLessThan(20 * 1024 * 1024);
  }, 120_000);

  it('refuses a snapshot another PGlite made, or a damaged one', () => {
    const dir = tempDir();
    for (const file of ['pglite-snapshot.json', 'pglite-snapshot.tar.gz'])
      cpSync(join(SNAPSHOT_DIR, file), join(dir, file));
    expect(readSnapshot(dir)).toBeInstanceOf(Blob);
    const manifest = JSON.parse(readFileSync(join(dir, 'pglite-snapshot.json'), 'utf8')) as { pglite: string };
    writeFileSync(join(dir, 'pglite-snapshot.json'), JSON.stringify({ ...manifest, pglite: '0.0.1' }));
    expect(() => readSnapshot(dir)).toThrow(/made by PGlite 0\.0\.1, this is \d/);
    writeFileSync(join(dir, 'pglite-snapshot.json'), JSON.stringify(manifest));
    const tarball = readFileSync(join(dir, 'pglite-snapshot.tar.gz'));
    const middle = tarball.length >> 1;
    tarball.writeUInt8(tarball.readUInt8(middle) ^ 1, middle);
    writeFileSync(join(dir, 'pglite-snapshot.tar.gz'), tarball);
    expect(() => readSnapshot(dir)).toThrow(/pglite-snapshot\.tar\.gz is damaged/);
  });

  it('is kept by a build whose PGlite, migrations and making code are unchanged, and made again when one changes or it is damaged', () => {
    const dir = tempDir();
    for (const file of ['pglite-snapshot.tar.gz', 'pglite.js', 'pglite-snapshot.js', 'migrations'])
      cpSync(join(SNAPSHOT_DIR, file), join(dir, file), { recursive: true });
    writeSnapshot(new Uint8Array(readFileSync(join(dir, 'pglite-snapshot.tar.gz'))), dir);
    expect(snapshotUpToDate(dir)).toBe(true);
    // A new migration (or an edited one) makes it stale.
    writeFileSync(join(dir, 'migrations', '999_next.sql'), 'select 1;\n');
    expect(snapshotUpToDate(dir)).toBe(false);
    writeSnapshot(new Uint8Array(readFileSync(join(dir, 'pglite-snapshot.tar.gz'))), dir);
    expect(snapshotUpToDate(dir)).toBe(true);
    writeFileSync(join(dir, 'pglite.js'), `${readFileSync(join(dir, 'pglite.js'), 'utf8')}\n// changed\n`);
    expect(snapshotUpToDate(dir)).toBe(false);
    writeSnapshot(new Uint8Array(readFileSync(join(dir, 'pglite-snapshot.tar.gz'))), dir);
    writeFileSync(join(dir, 'pglite-snapshot.tar.gz'), 'not a tarball');
    expect(snapshotUpToDate(dir)).toBe(false);
  });

  it('runs initdb instead of a snapshot another PGlite made, says so once, and the run works', async () => {
    // A copy of the build whose snapshot says another PGlite made it.
    const tree = tempDir();
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(tree, part), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    const manifestFile = join(tree, 'dist', 'store', 'pglite-snapshot.json');
    writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(readFileSync(manifestFile, 'utf8')), pglite: '0.0.1' }));
    const cwd = tempDir();
    writeFileSync(join(cwd, 'wf.sh'), 'spool step one -- echo one\nspool step two -- echo two\n');
    const run = await spool([join(tree, 'bin', 'spool'), 'run', 'wf.sh'], { cwd, program: process.execPath });
    expect(run.code, run.output).toBe(0);
    const notes = run.output.split('\n').filter((line) => line.includes('ready-made embedded data directory'));
    expect(notes).toEqual([expect.stringContaining('it was made by PGlite 0.0.1, this is ')]);
    expect(run.output).toContain('two');
  }, 180_000);
});

/**
 * In a Node of its own, with a store open on `dir` and after a full collection: the bytes
 * ArrayBuffers hold, and the C library's heap resident (`[heap]` in /proc/self/smaps).
 */
function memoryOnceOpen(dir: string): { arrayBuffers: number; cHeap: number } {
  const script = `const { openPgliteStore } = await import(${JSON.stringify(join(ROOT, 'dist/store/pglite.js'))});
    const { readFileSync } = await import('node:fs');
    const store = await openPgliteStore(${JSON.stringify(dir)});
    globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 50)); globalThis.gc();
    const heap = /\\[heap\\]\\n(?:.*\\n)*?Rss:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/smaps', 'utf8'));
    console.log(JSON.stringify({ arrayBuffers: process.memoryUsage().arrayBuffers, cHeap: Number(heap?.[1] ?? 0) * 1024 }));
    await store.close();`;
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })) as { arrayBuffers: number; cHeap: number };
}
