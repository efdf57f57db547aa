import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { signalRun } from '../../src/engine/wake.js';
import { shardOfRun } from '../../src/store/run-shards.js';
import { eventually, getRun, givenWorkflow, startCluster, startKubelet, watchJobsCreated, whenRunCreated, type Cluster } from './support/cluster.js';

const SHARDS = 4;
// 5 s: a loaded machine (CI, other tests beside) must not make replicas lose their shards mid-test.
const LEASE_SECONDS = 5;
/** Runs are made until each replica leads the shards of at least this many. */
const RUNS_EACH = 2;
const SCRIPT = 'spool step a -- echo a\nspool sleep 1s\nspool wait signal go > /dev/null\nspool step b -- echo b\n';

/**
 * Issue 36, item 1: several active replicas, each leading a share of the runs' shards. While runs
 * wake from a sleep and signals arrive, one replica crashes and another joins; every run finishes,
 * none is lost, no pass is started twice (one Job per pass number) and each step is in a journal once.
 */
describe('operator replicas sharing the runs in shards', () => {
  let cluster: Cluster;
  let jobWatch: Awaited<ReturnType<typeof watchJobsCreated>>;

  beforeAll(async () => {
    cluster = await startCluster('team-shards');
    await givenWorkflow(cluster, 'nap', 'nap.sh', SCRIPT);
    jobWatch = await watchJobsCreated(cluster);
  }, 180_000);

  afterAll(async () => {
    await jobWatch?.stop();
    await cluster?.stop();
  });

  const start = (name: string): Promise<Operator> => cluster.startOperator(name, { leaseDurationSeconds: LEASE_SECONDS, shards: SHARDS });
  /** Until the replicas between them lead every shard once, each at least one. */
  const untilShared = (replicas: Operator[]): Promise<boolean> =>
    eventually(
      'every shard led once, by each replica some',
      () => {
        const led = replicas.map((replica) => replica.shards());
        return Promise.resolve(led.every((shards) => shards.length > 0) && led.flat().sort().join() === [...Array(SHARDS).keys()].join());
      },
      20_000,
    );
  const runIdOf = async (name: string): Promise<string> => eventually(`${name}'s run id`, async () => (await getRun(cluster, name)).status?.runId);

  it('given 2 replicas with 4 shards, when one crashes and another joins while runs sleep and wait for signals, then every run succeeds with each pass started once', async () => {
    const a = await start('op-a');
    const b = await start('op-b');
    await untilShared([a, b]);
    // Every pod's agent calls op-a, which hosts the passes of its own shards and forwards the others'.
    const kubelet = startKubelet(cluster, a.url);
    try {
      // A run's shard follows from its id, which is random: Runs are made until each replica has some.
      const names: string[] = [];
      const ids: string[] = [];
      const runsOf = (replica: Operator) => ids.filter((id) => replica.shards().includes(shardOfRun(id, SHARDS))).length;
      while (runsOf(a) < RUNS_EACH || runsOf(b) < RUNS_EACH) {
        const name = `nap-${names.length}`;
        await whenRunCreated(cluster, name, 'nap');
        names.push(name);
        ids.push(await runIdOf(name));
        if (names.length > 20) throw new Error(`20 Runs and still not ${RUNS_EACH} for each replica: ${JSON.stringify([a.shards(), b.shards(), ids])}`);
      }

      // Some runs on each replica are asleep or past it when op-b dies without a word.
      await eventually('every run past step a', async () => {
        const runs = await Promise.all(ids.map((id) => a.store.getRun(id)));
        return runs.every((run) => run && run.passes >= 1 && run.status !== 'pending');
      }, 30_000);
      // The shards op-a leads all along, looked at every 50 ms from here to the end.
      let steady = a.shards();
      const sampling = setInterval(() => (steady = steady.filter((shard) => a.shards().includes(shard))), 50);
      await b.kill();
      const c = await start('op-c');
      // A signal for each run, as the API of either replica records one (POST /v1/runs/:id/signals), whoever leads its shard.
      for (const [i, id] of ids.entries()) await signalRun((i % 2 === 0 ? a : c).store, id, 'go', '', new Date());
      await untilShared([a, c]);
      for (const name of names) await eventually(`${name} Succeeded`, async () => {
        const phase = (await getRun(cluster, name)).status?.phase;
        if (phase === 'Failed' || phase === 'Cancelled') throw new Error(`${name} ended ${phase}`);
        return phase === 'Succeeded';
      }, 60_000);

      for (const id of ids) {
        const results = (await a.store.readJournal(id)).filter((entry) => entry.kind === 'result').map((entry) => `${entry.verb} ${entry.name}`);
        expect(results.filter((result) => result.startsWith('step '))).toEqual(['step a', 'step b']);
        expect(new Set(results).size).toBe(results.length);
      }
      // One Job per pass: a Job name is `<Run>-p<N>`, so a pass started twice is a name seen twice.
      expect(new Set(jobWatch.names).size).toBe(jobWatch.names.length);
      for (const name of names) {
        const passes = jobWatch.names.filter((job) => job.startsWith(`${name}-p`)).map((job) => Number(job.slice(`${name}-p`.length))).sort((x, y) => x - y);
        const run = await getRun(cluster, name);
        expect(passes).toEqual(Array.from({ length: run.status?.passes ?? 0 }, (_, i) => i + 1));
      }
      // Passes are lost with the shards that change hands (op-b's, and those op-a gives op-c), never in a shard op-a
      // kept: a replica that takes a shard recovers that shard's runs, not every run left running.
      clearInterval(sampling);
      const events = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace });
      const lostIn = events.items.filter((event) => event.reason === 'PassLost').map((event) => event.involvedObject.name ?? '');
      for (const name of new Set(lostIn)) expect(steady).not.toContain(shardOfRun(ids[names.indexOf(name)] ?? '', SHARDS));
      await c.close();
    } finally {
      await kubelet.stop();
    }
    await a.close();
  }, 150_000);
});
