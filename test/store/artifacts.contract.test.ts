import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgliteStore } from '../../src/store/pglite.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import type { Store } from '../../src/store/store.js';
import { blobBackendContract } from '../support/blob-backend-contract.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/** Artifact metadata, kept in the SQL store whatever backend holds the bytes. */
function artifactStoreContract(name: string, open: () => Promise<Store>): void {
  describe(`artifact metadata: ${name}`, () => {
    const artifact = (runId: string, name: string, position: number, size: number) => ({
      runId,
      name,
      position,
      size,
      sha256: 'a'.repeat(64),
      contentType: 'text/plain',
      blobKey: `${runId}/${position}/1/`,
      parts: Math.ceil(size / 10),
    });

    it('given artifacts of two runs, then each run lists its own in put order, gets one by name, and totals its bytes', async () => {
      const store = await open();
      await store.artifacts.record(artifact('m1', 'b', 1, 30));
      await store.artifacts.record(artifact('m1', 'a', 4, 5_000_000_000));
      await store.artifacts.record(artifact('m2', 'a', 0, 7));

      expect((await store.artifacts.list('m1')).map((each) => each.name)).toEqual(['b', 'a']);
      expect(await store.artifacts.get('m1', 'a')).toMatchObject({ size: 5_000_000_000, position: 4, blobKey: 'm1/4/1/', parts: 500_000_000 });
      expect(await store.artifacts.get('m1', 'c')).toBeNull();
      expect(await store.artifacts.totalBytes('m1')).toBe(5_000_000_030);
      expect(await store.artifacts.totalBytes('m3')).toBe(0);
    });

    it('given a name recorded twice, then the first record is kept', async () => {
      const store = await open();
      await store.artifacts.record(artifact('m4', 'x', 1, 10));
      const second = await store.artifacts.record(artifact('m4', 'x', 2, 20));

      expect(second).toMatchObject({ position: 1, size: 10 });
    });

    it('given a transaction that fails, then the artifact it recorded is not kept', async () => {
      const store = await open();
      await expect(
        store.transaction(async (tx) => {
          await tx.artifacts.record(artifact('m5', 'x', 1, 10));
          await tx.artifacts.blobs.writePart('m5/1/1/', 0, Buffer.from('bytes'));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      expect(await store.artifacts.get('m5', 'x')).toBeNull();
    });
  });
}

describe('PGlite', () => {
  let shared: SqlStore | undefined;
  const open = async (): Promise<Store> => (shared ??= await openPgliteStore());
  afterAll(async () => {
    await shared?.close();
  });
  blobBackendContract('PostgreSQL rows on PGlite', async () => (await open()).artifacts.blobs);
  artifactStoreContract('PGlite', open);
});

describe('PostgreSQL server', () => {
  let server: TestPostgres | undefined;
  let shared: SqlStore | undefined;
  const open = async (): Promise<Store> => (shared ??= await openPostgresStore(server!.url, { max: 4 }));
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await shared?.close();
    await server?.stop();
  });
  blobBackendContract('PostgreSQL rows', async () => (await open()).artifacts.blobs);
  artifactStoreContract('postgres', open);
});
