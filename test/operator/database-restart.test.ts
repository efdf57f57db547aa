import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/common/json-log.js';
import type { Operator } from '../../src/operator/operator.js';
import { freePort } from '../support/dev.js';
import {
  eventually,
  givenWorkflow,
  readinessOn,
  startCluster,
  startKubelet,
  whenRunCreated,
  type Cluster,
} from './support/cluster.js';

/**
 * The operator's PostgreSQL restarts (as its pod would): readiness goes false while it is away,
 * the leader retries by itself, and runs sleeping or in a step through it finish, each call once.
 */
describe('the operator across a restart of its PostgreSQL', () => {
  let cluster: Cluster;
  let operator: Operator;
  /** What op-db logged, parsed. */
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    cluster = await startCluster('team-db');
    const log = jsonLogger((line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      process.stderr.write(line);
    });
    operator = await cluster.startLeader('op-db', { log });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const ready = async (): Promise<number> =>
    (await fetch(`${operator.healthUrl}/readyz`).catch(() => null))?.status ?? 0;

  it('given a Run asleep and one in a step, when PostgreSQL restarts, then /readyz is 503 meanwhile and both Runs succeed with each step recorded once', async () => {
    await givenWorkflow(cluster, 'nap', 'nap.sh', 'spool step a -- echo a\nspool sleep 3s\nspool step b -- echo b\n');
    await givenWorkflow(
      cluster,
      'busy',
      'busy.sh',
      'spool step long -- sh -c "sleep 2; echo long"\nspool step next -- echo next\n',
    );
    const kubelet = startKubelet(cluster, operator.url);
    try {
      await whenRunCreated(cluster, 'nap-1', 'nap');
      const napId = await eventually(
        'nap-1 waiting',
        async () =>
          (await operator.store.listRuns({ limit: 10 })).find(
            (run) => run.workflow.startsWith('nap/') && run.status === 'waiting',
          )?.id,
      );
      await whenRunCreated(cluster, 'busy-1', 'busy');
      const busyId = await eventually(
        'busy-1 running',
        async () =>
          (await operator.store.listRuns({ limit: 10 })).find(
            (run) => run.workflow.startsWith('busy/') && run.status === 'running',
          )?.id,
      );
      expect(await ready()).toBe(200);

      await cluster.postgres.down();
      await eventually('readiness to go false', async () => (await ready()) === 503, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await cluster.postgres.start();
      await eventually('readiness back', async () => (await ready()) === 200, 30_000);
      // Every sweep (each 200 ms here) failed while it was away: said once, not once a sweep.
      const sweeps = lines.filter((line) => line.msg === 'sweep failed').map((line) => String(line.error));
      expect(sweeps.length).toBeGreaterThan(0);
      expect(sweeps.filter((error, i) => error === sweeps[i - 1])).toEqual([]);

      for (const id of [napId, busyId])
        await eventually(
          `${id} to succeed`,
          async () => (await operator.store.getRun(id))?.status === 'succeeded',
          90_000,
        );
      for (const id of [napId, busyId]) {
        const results = (await operator.store.readJournal(id))
          .filter((entry) => entry.kind === 'result')
          .map((entry) => `${entry.verb} ${entry.name}`);
        expect(new Set(results).size).toBe(results.length);
      }
      expect(
        (await operator.store.readJournal(busyId))
          .filter((entry) => entry.kind === 'result')
          .map((entry) => entry.name),
      ).toEqual(['long', 'next']);
    } finally {
      await kubelet.stop();
    }
  }, 180_000);
  it('given a replica that comes to lead while PostgreSQL is away, then once it is back that leader recovers and dispatches: a Run asleep through it finishes', async () => {
    await operator.kill();
    const first = await cluster.startLeader('op-db-a', { leaseDurationSeconds: 3 });
    const second = await cluster.startOperator('op-db-b', { leaseDurationSeconds: 3 });
    await givenWorkflow(cluster, 'doze', 'doze.sh', 'spool step a -- echo a\nspool sleep 4s\nspool step b -- echo b\n');
    const kubelet = startKubelet(cluster, second.url);
    try {
      await whenRunCreated(cluster, 'doze-1', 'doze');
      // Pass 1 runs under the first leader, whose agent URL the kubelet does not serve: it is lost and replays.
      const dozeId = await eventually('doze-1 in the store', async () => (await second.store.listRuns({ limit: 20 })).find((run) => run.workflow.startsWith('doze/'))?.id);

      await cluster.postgres.down();
      await first.kill();
      await eventually('the second replica to lead, the database away', () => Promise.resolve(second.isLeader()), 20_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await cluster.postgres.start();

      await eventually('doze-1 to succeed', async () => (await second.store.getRun(dozeId))?.status === 'succeeded', 90_000);
    } finally {
      await kubelet.stop();
      await second.close();
    }
  }, 180_000);

  it('given a replica started while PostgreSQL is away, then it waits not ready (no exit, no crash loop), and once the database is back it leads and a Run finishes', async () => {
    await cluster.postgres.down();
    const metricsPort = await freePort();
    const starting = cluster.startOperator('op-db-late', { metricsPort });
    const readiness = (): Promise<string> => readinessOn(metricsPort);
    await eventually('the probes served', async () => (await readiness()) === '503 not ready: waiting for the database', 20_000);
    // Still waiting some retries later: it neither gave up nor exited.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await readiness()).toBe('503 not ready: waiting for the database');

    await cluster.postgres.start();
    const late = await starting;
    await eventually('op-db-late to lead', () => Promise.resolve(late.isLeader()), 30_000);
    // Leading comes before the informers' first sync, which readiness also waits for.
    await eventually('op-db-late ready', async () => (await readiness()) === '200 ok', 30_000);
    await givenWorkflow(cluster, 'late', 'late.sh', 'spool step a -- echo a\n');
    const kubelet = startKubelet(cluster, late.url);
    try {
      await whenRunCreated(cluster, 'late-1', 'late');
      await eventually('late-1 to succeed', async () => (await late.store.listRuns({ limit: 20 })).some((run) => run.workflow.startsWith('late/') && run.status === 'succeeded'), 60_000);
    } finally {
      await kubelet.stop();
      await late.close();
    }
  }, 120_000);
});
