import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BlobBackend } from '../../src/store/artifacts/types.js';

/**
 * What every artifact blob backend must do (src/store/artifacts/types.ts). `open` gives a backend
 * over empty storage; keys are per test, so backends may share storage between tests.
 */
export function blobBackendContract(name: string, open: () => Promise<BlobBackend>): void {
  describe(`blob backend contract: ${name}`, () => {
    it('given parts written out of order, when each is read, then it holds exactly the bytes written; a part never written is null', async () => {
      const blobs = await open();
      const parts = [randomBytes(512 * 1024), randomBytes(1), new Uint8Array(0), randomBytes(300_000)];
      for (const index of [3, 0, 2, 1]) await blobs.writePart('k1/a/', index, parts[index] ?? new Uint8Array());

      for (const [index, bytes] of parts.entries()) expect(Buffer.from((await blobs.readPart('k1/a/', index)) ?? [])).toEqual(Buffer.from(bytes));
      expect(await blobs.readPart('k1/a/', 4)).toBeNull();
      expect(await blobs.readPart('k1/other/', 0)).toBeNull();
    });

    it('given a part written twice (a retried request), then the last write is what is read', async () => {
      const blobs = await open();
      await blobs.writePart('k2/', 0, Buffer.from('first'));
      await blobs.writePart('k2/', 0, Buffer.from('second'));

      expect(Buffer.from((await blobs.readPart('k2/', 0)) ?? []).toString()).toBe('second');
    });

    it('given blobs under several keys, when a prefix is deleted, then exactly the keys that start with it are gone, whatever characters they hold', async () => {
      const blobs = await open();
      for (const key of ['run-1/0/1/', 'run-1/3/2/', 'run-10/0/1/', 'run_1/0/1/', 'run%1/0/1/']) await blobs.writePart(key, 0, Buffer.from(key));

      await blobs.deletePrefix('run-1/');

      expect(await blobs.readPart('run-1/0/1/', 0)).toBeNull();
      expect(await blobs.readPart('run-1/3/2/', 0)).toBeNull();
      for (const kept of ['run-10/0/1/', 'run_1/0/1/', 'run%1/0/1/']) expect(Buffer.from((await blobs.readPart(kept, 0)) ?? []).toString()).toBe(kept);
      await blobs.deletePrefix('nothing-here/');
    });
  });
}
