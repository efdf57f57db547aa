import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Blobs } from '../../src/store/artifacts/s3/s3-blobs.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { startS3, type TestS3 } from '../support/s3-server.js';

/**
 * A store whose artifacts' bytes are in S3 deletes them with the run: the archive's retention
 * (deleteRunsFinishedBefore) and the operator's sweep (deleteRunArtifacts). S3 is outside the
 * database's transaction, so storage that is down must leave the run and its records for a retry.
 */
describe('run deletion with artifacts in S3 (versitygw)', () => {
  let s3: TestS3;
  let store: SqlStore;

  beforeAll(async () => {
    s3 = await startS3();
    store = await openPgliteStore(undefined, new S3Blobs(s3.location('ret/')));
  }, 600_000);

  afterAll(async () => {
    await store?.close();
    await s3?.stop();
  });

  const object = (key: string): boolean => existsSync(join(s3.dir, s3.bucket, 'ret', key));
  /** A run finished `ago` ms ago with one recorded artifact and one part a crashed put left. */
  const finishedRunWithArtifact = async (id: string, ago: number): Promise<void> => {
    await store.createRun({ id, project: 'p1', workflow: 'wf', interpreter: 'bash', script: 'true' });
    await store.updateRun(id, { status: 'succeeded', finishedAt: new Date(Date.now() - ago) });
    await store.artifacts.blobs.writePart(`${id}/1/1/`, 0, Buffer.from('kept'));
    await store.artifacts.blobs.writePart(`${id}/3/1/`, 0, Buffer.from('crashed put'));
    await store.artifacts.record({
      runId: id,
      name: 'a.bin',
      position: 1,
      size: 4,
      sha256: 'x',
      contentType: 'application/octet-stream',
      blobKey: `${id}/1/1/`,
      parts: 1,
    });
  };

  it('given runs past the archive retention, then their objects go with them, and younger runs keep theirs', async () => {
    await finishedRunWithArtifact('old', 100_000);
    await finishedRunWithArtifact('young', 1_000);

    expect(await store.deleteRunsFinishedBefore(new Date(Date.now() - 10_000), 100)).toBe(1);

    expect(object('old/1/1/0') || object('old/3/1/0')).toBe(false);
    expect(object('young/1/1/0') && object('young/3/1/0')).toBe(true);
    expect(await store.getRun('old')).toBeNull();
  });

  it('given S3 down, then the archive retention deletes nothing and says why, and the next attempt deletes the run', async () => {
    await finishedRunWithArtifact('outage', 100_000);
    await s3.stopServing();
    try {
      await expect(store.deleteRunsFinishedBefore(new Date(Date.now() - 10_000), 100)).rejects.toThrow(/ECONNREFUSED/);
      expect((await store.getRun('outage'))?.id).toBe('outage');
      expect(await store.artifacts.get('outage', 'a.bin')).not.toBeNull();
    } finally {
      await s3.serveAgain();
    }

    expect(await store.deleteRunsFinishedBefore(new Date(Date.now() - 10_000), 100)).toBe(1);
    expect(object('outage/1/1/0')).toBe(false);
  });

  it('given finished runs with artifacts, then the sweep lists them oldest first, and deleting one run’s artifacts keeps the run', async () => {
    await finishedRunWithArtifact('swept', 50_000);

    expect(
      (await store.artifacts.finishedRunsWithArtifacts(10)).map((run) => [run.runId, run.count, run.bytes]),
    ).toEqual([
      ['swept', 1, 4],
      ['young', 1, 4],
    ]);
    expect(await store.artifacts.deleteRunArtifacts('swept')).toBe(1);

    expect(object('swept/1/1/0') || object('swept/3/1/0')).toBe(false);
    expect(await store.artifacts.list('swept')).toEqual([]);
    expect((await store.getRun('swept'))?.status).toBe('succeeded');
    expect((await store.artifacts.finishedRunsWithArtifacts(10)).map((run) => run.runId)).toEqual(['young']);
  });
});
