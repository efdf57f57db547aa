import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACT_MIB, ARTIFACT_WORKFLOW } from '../support/artifact-workflow.js';
import { freePort } from '../support/dev.js';
import { startS3, type TestS3 } from '../support/s3-server.js';
import { linesOf, removeTempDirs, runIdOf, spool, tempDir, withStore, writeFiles } from '../support/spool.js';

/** `--artifacts s3://...`: spool run on PGlite with the bytes in a real S3-compatible server (versitygw on loopback). */

let s3: TestS3 | undefined;

beforeAll(async () => {
  s3 = await startS3();
}, 600_000);

afterAll(async () => {
  await s3?.stop();
  removeTempDirs();
});

const keys = (): Record<string, string> => ({
  AWS_ACCESS_KEY_ID: s3!.credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: s3!.credentials.secretAccessKey,
});

describe('artifacts in S3', () => {
  it(`given --artifacts s3://bucket/prefix, when the bash workflow puts ${ARTIFACT_MIB} MiB, sleeps and gets it on pass 2, then the sha256 matches and the parts are objects under the prefix, none in the database`, async () => {
    const dir = tempDir();
    writeFiles(dir, { 'build.sh': ARTIFACT_WORKFLOW });

    const result = await spool(
      ['run', 'build.sh', '--artifacts', `s3://${s3!.bucket}/ci/artifacts`, '--s3-endpoint', s3!.endpoint],
      { cwd: dir, env: keys() },
    );

    expect(result.output).toMatch(/sha256 matches on pass 2: [0-9a-f]{64}/);
    expect(result.code).toBe(0);
    const id = runIdOf(result.output);
    const objects = readdirSync(join(s3!.dir, s3!.bucket, 'ci', 'artifacts', id, '1', '1'));
    expect(objects.length).toBe(ARTIFACT_MIB * 2);
    // Pass 2's replayed put uploaded nothing: no key of a second attempt.
    expect(existsSync(join(s3!.dir, s3!.bucket, 'ci', 'artifacts', id, '1', '2'))).toBe(false);
    await withStore(join(dir, '.spool'), async (store) => {
      expect(await store.artifacts.blobs.readPart(`${id}/1/1/`, 0)).toBeNull(); // the store's own rows hold nothing
      expect((await store.artifacts.list(id)).map((each) => [each.name, each.size])).toEqual([
        ['build.bin', ARTIFACT_MIB * 1024 * 1024],
      ]);
    });
  }, 300_000);

  it('given --artifacts s3://... without keys in the environment, then spool says so in one line, exits 2 and records nothing', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'w.sh': 'echo ran\n' });

    const result = await spool(['run', 'w.sh', '--artifacts', `s3://${s3!.bucket}`, '--s3-endpoint', s3!.endpoint], {
      cwd: dir,
      env: { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined },
    });

    expect(linesOf(result.output)).toEqual([
      `spool: --artifacts s3://${s3!.bucket} needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment`,
    ]);
    expect(result.code).toBe(2);
    expect(existsSync(join(dir, '.spool'))).toBe(false);
  });

  it('given a bucket the server does not have, a malformed location, a wrong key or an endpoint nothing answers on, then each is one line at start-up, exit 2 (69 for the endpoint nothing answers on)', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'w.sh': 'echo ran\n' });
    const run = (...flags: string[]) => spool(['run', 'w.sh', ...flags], { cwd: dir, env: keys() });

    const missing = await run('--artifacts', 's3://no-such-bucket/x', '--s3-endpoint', s3!.endpoint);
    expect(linesOf(missing.output)).toEqual([
      expect.stringMatching(/^spool: --artifacts s3:\/\/no-such-bucket\/x\/: S3 GET .*HTTP 404 NoSuchBucket/),
    ]);
    expect(missing.code).toBe(2);

    const malformed = await run('--artifacts', 'gs://bucket');
    expect(linesOf(malformed.output)).toEqual([
      "spool: --artifacts takes postgresql or s3://BUCKET[/PREFIX] (a bucket name of 3-63 lower-case letters, digits, dots and dashes), not 'gs://bucket'",
    ]);
    expect(malformed.code).toBe(2);

    const wrongKey = await spool(['run', 'w.sh', '--artifacts', `s3://${s3!.bucket}`, '--s3-endpoint', s3!.endpoint], {
      cwd: dir,
      env: { ...keys(), AWS_SECRET_ACCESS_KEY: 'wrong' },
    });
    expect(linesOf(wrongKey.output)).toEqual([expect.stringMatching(/HTTP 403 SignatureDoesNotMatch/)]);
    expect(wrongKey.code).toBe(2);

    // Unavailable, as a database that is away: the operator waits for it, the server answers 503
    // with Retry-After, and a command exits 69 (it exited 2, as for a bad flag, though the operator
    // retried the same error).
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const unanswered = await run('--artifacts', `s3://${s3!.bucket}`, '--s3-endpoint', nobody);
    expect(linesOf(unanswered.output)).toEqual([expect.stringMatching(new RegExp(`^spool: --artifacts s3://${s3!.bucket}/: .*ECONNREFUSED`))]);
    expect(unanswered.code).toBe(69);
    expect(existsSync(join(dir, '.spool'))).toBe(false);

    const endpointAlone = await run('--s3-endpoint', s3!.endpoint);
    expect(linesOf(endpointAlone.output)).toEqual([
      'spool: --s3-endpoint is for --artifacts s3://BUCKET/PREFIX; artifacts are in PostgreSQL here',
    ]);
    expect(endpointAlone.code).toBe(2);
  });
});
