import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { freePort } from '../support/dev.js';
import { startS3, type TestS3 } from '../support/s3-server.js';
import { GaveUp, eventually, getRun, readinessOn, startCluster, startKubelet, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * Artifacts belong to their run (issue 20): the operator, with its bytes in S3 (versitygw on
 * loopback), deletes a run's artifacts when its Run resource is deleted, and when its Workflow's
 * spec.artifacts.ttlSecondsAfterFinished has passed; storage that is down delays that, without a
 * finalizer holding up the Run's deletion, and the next sweep does it.
 */
describe('artifact lifecycle on a cluster', () => {
  let cluster: Cluster;
  let s3: TestS3;
  let operator: Operator;
  let kubelet: { stop(): Promise<void> };
  let store: SqlStore;
  const lines: string[] = [];

  beforeAll(async () => {
    [cluster, s3] = await Promise.all([startCluster('team-art'), startS3()]);
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    const log = {
      info: (msg: string, fields?: object) => void lines.push(JSON.stringify({ msg, ...fields })),
      error: (msg: string, error: unknown, fields?: object) =>
        void lines.push(JSON.stringify({ msg, error: String(error), ...fields })),
      with() {
        return log;
      },
    };
    // The operator starts while neither S3 nor PostgreSQL answers yet (all starting at once on a
    // new cluster): it waits for each in turn, not ready and saying which, rather than exit and
    // crash-loop.
    await Promise.all([s3.stopServing(), cluster.postgres.down()]);
    const metricsPort = await freePort();
    const starting = cluster.startLeader('op-artifacts', {
      artifacts: { artifacts: `s3://${s3.bucket}/op`, s3Endpoint: s3.endpoint },
      artifactSweepEveryMs: 300,
      metricsPort,
      log,
    });
    const readiness = (): Promise<string> => readinessOn(metricsPort);
    await eventually('the operator waiting for S3', async () => (await readiness()) === '503 not ready: waiting for the artifact store', 30_000);
    expect(lines.filter((line) => line.includes('the artifact store cannot be reached; waiting for it'))).toHaveLength(1);
    await s3.serveAgain();
    await eventually('the operator waiting for PostgreSQL', async () => (await readiness()) === '503 not ready: waiting for the database', 30_000);
    const waiting = lines.filter((line) => line.includes('the database cannot be reached; waiting for it'));
    expect(waiting).toHaveLength(1);
    // Where it looked, without the URL's user (or password).
    const database = new URL(cluster.postgres.url);
    expect(waiting[0]).toContain(`is PostgreSQL running at ${database.hostname}:${database.port}${database.pathname}?`);
    expect(waiting[0]).not.toContain(`${database.username}@`);
    await cluster.postgres.start();
    operator = await starting;
    // Leading comes before the informers' first sync, which readiness also waits for.
    await eventually('the operator ready', async () => (await readiness()) === '200 ok', 30_000);
    kubelet = startKubelet(cluster, operator.url);
    store = await openPostgresStore(cluster.postgres.url, { max: 2 });
  }, 600_000);

  afterAll(async () => {
    await kubelet?.stop();
    await store?.close();
    await cluster?.stop();
    await s3?.stop();
  });

  const workflow = (name: string, spec: object = {}) =>
    cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-art',
      plural: 'workflows',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name },
        spec: { filename: `${name}.sh`, script: 'echo kept > out.txt\nspool artifact put out.txt out.txt\n', ...spec },
      },
    });
  const objectsOf = (runId: string): string[] => {
    const dir = join(s3.dir, s3.bucket, 'op', runId);
    return existsSync(dir)
      ? (readdirSync(dir, { recursive: true }) as string[]).filter((path) => /^\d+\/\d+\/\d+$/.test(path))
      : [];
  };
  /** Runs the Workflow once to Succeeded: answers the run id, whose artifact is in the bucket. */
  const ranOnce = async (workflowName: string, runName: string): Promise<string> => {
    await whenRunCreated(cluster, runName, workflowName);
    const done = await eventually(
      `${runName} Succeeded`,
      async () => {
        const run = await getRun(cluster, runName);
        if (run.status?.phase === 'Failed') throw new GaveUp(`${runName} failed: ${run.status.message}`);
        return run.status?.phase === 'Succeeded' && run;
      },
      90_000,
    );
    const runId = done.status?.runId ?? '';
    expect(objectsOf(runId)).toEqual(['0/1/0']);
    expect((await store.artifacts.list(runId)).map((each) => each.name)).toEqual(['out.txt']);
    return runId;
  };
  const deleteRun = (name: string) =>
    cluster.custom.deleteNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-art',
      plural: 'runs',
      name,
    });

  it('given a run with an artifact, when its Run is deleted, then its objects and records go, and the run stays in the store', async () => {
    await workflow('keep');
    const runId = await ranOnce('keep', 'keep-1');

    // Nothing deletes them while the Run is there.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(objectsOf(runId)).toEqual(['0/1/0']);
    await deleteRun('keep-1');

    await eventually(
      'the artifacts gone',
      async () => objectsOf(runId).length === 0 && (await store.artifacts.list(runId)).length === 0,
      30_000,
    );
    expect((await store.getRun(runId))?.status).toBe('succeeded');
    expect(
      lines.some(
        (line) =>
          line.includes('"msg":"artifacts deleted"') && line.includes(runId) && line.includes('its Run was deleted'),
      ),
    ).toBe(true);
  }, 180_000);

  it("given a Workflow's artifacts.ttlSecondsAfterFinished, then its run's artifacts go that long after it finished while the Run stays", async () => {
    await workflow('brief', { artifacts: { ttlSecondsAfterFinished: 2 } });
    const runId = await ranOnce('brief', 'brief-1');

    await eventually(
      'the artifacts gone',
      async () => objectsOf(runId).length === 0 && (await store.artifacts.list(runId)).length === 0,
      30_000,
    );
    expect((await getRun(cluster, 'brief-1')).status?.phase).toBe('Succeeded');
  }, 180_000);

  it('given storage down when a Run is deleted, then the Run goes at once, the failure is logged, and once storage is back the next sweep deletes the artifacts', async () => {
    const runId = await ranOnce('keep', 'keep-2');
    await s3.stopServing();
    try {
      await deleteRun('keep-2');
      await eventually(
        'the Run gone',
        async () => (await getRun(cluster, 'keep-2').catch(() => null)) === null,
        20_000,
      );
      await eventually(
        'a failed deletion logged',
        () => Promise.resolve(lines.some((line) => line.includes('deleting artifacts failed') && line.includes(runId))),
        30_000,
      );
      expect((await store.artifacts.list(runId)).length).toBe(1);
      // Counted for the alert (HyperspoolArtifactDeletionsFailing), by the run's namespace.
      const metrics = await (await fetch(`${operator.healthUrl}/metrics`)).text();
      expect(Number(/^hyperspool_artifact_deletions_failed_total\{namespace="team-art"\} (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    } finally {
      await s3.serveAgain();
    }

    await eventually(
      'the artifacts gone',
      async () => objectsOf(runId).length === 0 && (await store.artifacts.list(runId)).length === 0,
      30_000,
    );
  }, 180_000);

  it('given a negative artifacts.ttlSecondsAfterFinished, then the API server refuses the Workflow', async () => {
    await expect(workflow('negative', { artifacts: { ttlSecondsAfterFinished: -1 } })).rejects.toThrow(
      /ttlSecondsAfterFinished/,
    );
  });
});
