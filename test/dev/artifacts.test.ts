import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { ARTIFACT_MIB, ARTIFACT_WORKFLOW } from '../support/artifact-workflow.js';
import { finalLog, getRun, journalOf, submit } from '../support/dev.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/** Artifacts under `spool dev` on a PostgreSQL server: the default backend's rows in a real server. */

let postgres: TestPostgres | undefined;
let dev: DevServer | undefined;

beforeAll(async () => {
  postgres = await startPostgres();
  dev = await startDevServer({ port: 0, databaseUrl: postgres.url, pollMs: 50 });
}, 120_000);

afterAll(async () => {
  await dev?.close();
  await postgres?.stop();
  removeTempDirs();
});

describe('artifacts under spool dev on PostgreSQL', () => {
  it(`given a bash workflow that puts a ${ARTIFACT_MIB} MiB file and sleeps, when the next pass gets it back, then its sha256 matches and the replayed put uploaded nothing`, async () => {
    const dir = tempDir();
    writeFiles(dir, { 'build.sh': ARTIFACT_WORKFLOW });
    const url = dev!.url;

    const id = await submit(url, dir, 'build.sh');
    const log = await finalLog(url, id, 180_000);

    expect(log).toMatch(/sha256 matches on pass 2: [0-9a-f]{64}/);
    const run = await getRun(url, id);
    expect(run.status).toBe('succeeded');
    expect(run.passes).toBe(2);
    const journal = await journalOf(url, id);
    const put = journal.find((entry) => entry.kind === 'result' && entry.verb === 'artifact.put');
    expect(put?.data).toMatchObject({ size: ARTIFACT_MIB * 1024 * 1024, contentType: 'application/octet-stream' });
    const artifacts = await dev!.store.artifacts.list(id);
    expect(artifacts.map((each) => [each.name, each.blobKey, each.parts])).toEqual([['build.bin', `${id}/1/1/`, ARTIFACT_MIB * 2]]);
    expect(await dev!.store.artifacts.blobs.readPart(`${id}/1/2/`, 0)).toBeNull();
  }, 300_000);
});
