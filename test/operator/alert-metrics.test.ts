import { createServer, connect, type Server, type Socket } from 'node:net';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { untilPhase, agentOf, eventually, getRun, givenPodOf, givenWorkflow, jobsOf, startCluster, whenJobEnds, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * The metrics behind the alerts users asked for (config/prometheus/rules.yaml): passes lost, pass
 * pods that cannot start, runs in an open-ended wait, the database unreachable. Each is read from
 * the operator's /metrics while a real kube-apiserver and PostgreSQL make it happen.
 */

/** A TCP proxy to PostgreSQL that a test can cut (every connection dropped, new ones refused) and heal. */
async function cuttableProxy(targetUrl: string): Promise<{ url: string; cut(): void; heal(): void; close(): Promise<void> }> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) return client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = new URL(targetUrl);
  url.port = String(port);
  return {
    url: url.toString(),
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    heal() {
      cut = false;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the metrics behind the alerts', () => {
  let cluster: Cluster;
  let operator: Operator;
  let database: Awaited<ReturnType<typeof cuttableProxy>>;
  const scrape = async (): Promise<string> => (await fetch(`${operator.healthUrl}/metrics`)).text();
  const value = (text: string, series: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  beforeAll(async () => {
    cluster = await startCluster('team-alerts');
    database = await cuttableProxy(cluster.postgres.url);
    // One replica: a long lease, so a loaded machine's slow renewals do not hand its passes over mid-test.
    operator = await cluster.startLeader('op-alerts', { databaseUrl: database.url, leaseDurationSeconds: 15 });
    await givenWorkflow(cluster, 'waits', 'waits.sh', 'spool wait signal go\n');
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await database?.close();
  });

  /** A Run of `waits` whose pass-1 pod exists (played by the test), with its agent. */
  const runWithPod = async (name: string) => {
    await whenRunCreated(cluster, name, 'waits');
    const key = await eventually(`${name}'s run key`, async () => (await getRun(cluster, name)).metadata.labels?.['hyperspool.dev/run']);
    const job = await eventually(`${name}'s Job`, async () => (await jobsOf(cluster, key))[0]);
    const { pod, token } = await givenPodOf(cluster, job);
    const runId = (await getRun(cluster, name)).status?.runId ?? '';
    return { job, pod, agent: agentOf(operator.url, runId, 1, token) };
  };

  it('given a pass whose pod ends without its report, then hyperspool_passes_lost_total of its namespace counts it (and stood at 0 before)', async () => {
    const series = 'hyperspool_passes_lost_total{namespace="team-alerts"}';
    const { job } = await runWithPod('lost-1');
    expect(await eventually('the lost counter at 0', async () => value(await scrape(), series) === 0)).toBe(true);
    await whenJobEnds(cluster, job, 'Failed');
    expect(await eventually('a lost pass counted', async () => value(await scrape(), series) === 1)).toBe(true);
  });

  it("given a pass pod the kubelet cannot start, then hyperspool_pass_pods_not_starting says so by namespace and reason, until the pass is over", async () => {
    const series = 'hyperspool_pass_pods_not_starting{namespace="team-alerts",reason="ImagePullBackOff"}';
    const { job, pod } = await runWithPod('stuck-1');
    await cluster.core.patchNamespacedPodStatus(
      {
        namespace: cluster.namespace,
        name: pod.metadata?.name ?? '',
        body: { status: { phase: 'Pending', containerStatuses: [{ name: 'script', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await eventually('the pod counted as not starting', async () => value(await scrape(), series) === 1)).toBe(true);
    await whenJobEnds(cluster, job, 'Failed');
    expect(await eventually('the series gone with the pass', async () => value(await scrape(), series) === undefined)).toBe(true);
  });

  it('given a run waiting on a signal with no timeout, then hyperspool_oldest_open_wait_seconds of its namespace grows; a run sleeping on a timer is not an open wait', async () => {
    const series = 'hyperspool_oldest_open_wait_seconds{namespace="team-alerts"}';
    const sleeper = await runWithPod('sleeps-1');
    expect((await sleeper.agent.call({ verb: 'sleep', ms: 3_600_000 })).body).toMatchObject({ status: 'suspended' });
    await whenJobEnds(cluster, sleeper.job, 'Complete');
    await untilPhase('run sleeps-1', () => getRun(cluster, 'sleeps-1'), 'Waiting');
    expect(value(await scrape(), series)).toBeUndefined();

    const { job, agent } = await runWithPod('waits-1');
    expect((await agent.call({ verb: 'wait.signal', name: 'go' })).body).toMatchObject({ status: 'suspended' });
    await whenJobEnds(cluster, job, 'Complete');
    await untilPhase('run waits-1', () => getRun(cluster, 'waits-1'), 'Waiting');
    const first = await eventually('an open wait', async () => value(await scrape(), series));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(value(await scrape(), series)).toBeGreaterThan(first + 1);
  });

  it('given PostgreSQL cut off from the operator, then hyperspool_database_up is 0, and 1 again once it answers', async () => {
    expect(value(await scrape(), 'hyperspool_database_up')).toBe(1);
    database.cut();
    expect(await eventually('database_up 0', async () => value(await scrape(), 'hyperspool_database_up') === 0, 15_000)).toBe(true);
    database.heal();
    expect(await eventually('database_up 1', async () => value(await scrape(), 'hyperspool_database_up') === 1, 15_000)).toBe(true);
  }, 60_000);
});
