import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Blobs } from '../../src/store/artifacts/s3/s3-blobs.js';
import { blobBackendContract } from '../support/blob-backend-contract.js';
import { startS3, type TestS3 } from '../support/s3-server.js';

/** The S3 backend against a real S3-compatible server (versitygw, posix backend) on loopback. */
describe('S3 backend on versitygw', () => {
  let server: TestS3 | undefined;
  const opened: S3Blobs[] = [];
  const open = (prefix: string): S3Blobs => {
    const blobs = new S3Blobs(server!.location(prefix));
    opened.push(blobs);
    return blobs;
  };
  beforeAll(async () => {
    server = await startS3();
  }, 600_000);
  afterAll(async () => {
    for (const blobs of opened) blobs.close();
    await server?.stop();
  });

  blobBackendContract('S3 (versitygw), no prefix', () => Promise.resolve(open('')));
  blobBackendContract('S3 (versitygw), under a prefix', () => Promise.resolve(open('cluster-a/artifacts/')));

  it('given a prefix, then its parts are objects under it in the bucket, and deleting a prefix leaves other prefixes alone', async () => {
    const mine = open('tenant-1/');
    const theirs = open('tenant-2/');
    await mine.writePart('run-9/0/1/', 0, Buffer.from('mine'));
    await theirs.writePart('run-9/0/1/', 0, Buffer.from('theirs'));

    expect(existsSync(join(server!.dir, server!.bucket, 'tenant-1', 'run-9', '0', '1', '0'))).toBe(true);
    await mine.deletePrefix('run-9/');

    expect(await mine.readPart('run-9/0/1/', 0)).toBeNull();
    expect(Buffer.from((await theirs.readPart('run-9/0/1/', 0)) ?? []).toString()).toBe('theirs');
  });

  it('given more than one listing page of parts, when the prefix is deleted, then every part is gone', async () => {
    const blobs = open('many/');
    const parts = Array.from({ length: 1_203 }, (_, index) => index);
    for (let at = 0; at < parts.length; at += 50)
      await Promise.all(
        parts.slice(at, at + 50).map((part) => blobs.writePart('big/', part, Buffer.from([part % 256]))),
      );

    await blobs.deletePrefix('big/');

    expect(await blobs.readPart('big/', 0)).toBeNull();
    expect(await blobs.readPart('big/', 1_202)).toBeNull();
    const left = join(server!.dir, server!.bucket, 'many', 'big');
    expect(existsSync(left) ? readdirSync(left, { recursive: true }) : []).toEqual([]);
  }, 120_000);

  it('given wrong credentials, then a write fails with one line naming the server’s refusal', async () => {
    const blobs = new S3Blobs({
      ...server!.location(''),
      credentials: { accessKeyId: 'spooltest', secretAccessKey: 'wrong' },
    });
    opened.push(blobs);

    await expect(blobs.writePart('k/', 0, Buffer.from('x'))).rejects.toThrow(
      /^S3 PUT s3:\/\/spool-test\/k\/0: HTTP 403 SignatureDoesNotMatch/,
    );
  });

  it('given the server down, then a read fails after its retries, and once it serves again the same backend reads the part', async () => {
    const blobs = open('outage/');
    await blobs.writePart('k/', 0, Buffer.from('kept'));
    await server!.stopServing();
    try {
      await expect(blobs.readPart('k/', 0)).rejects.toThrow(/ECONNREFUSED|socket hang up|ECONNRESET/);
    } finally {
      await server!.serveAgain();
    }

    expect(Buffer.from((await blobs.readPart('k/', 0)) ?? []).toString()).toBe('kept');
  }, 60_000);
});
