// Several active operator replicas on the real node (issue 36, item 1): the operator Deployment
// sharded as docs/operator.md#shards tells users (`--shards 4`, changed with the Deployment scaled
// to 0, then up to its two replicas), runs that sleep and wait for a signal, and while they wake and
// the signals arrive one replica's pod is killed (a forced delete, no grace) and the Deployment is
// scaled up by one. Every run must succeed with one Job per pass ever created and each call once in
// its journal, and every shard's Lease must end up held by a live replica, each replica leading some.
// test/operator/sharded-replicas.test.ts is the same on a bare kube-apiserver with operator
// processes; here the replicas are pods, the Leases the Deployment's, and agents' calls reach any
// replica through the Service and are forwarded to their shard's leader by pod IP.
//
// The sharded Deployment stands in for the suite's install while the file runs: afterAll scales it
// to 0 again (replicas of two shard counts must never overlap) and puts the suite's install back.
//
//   npm run test:e2e -- test/e2e/shards.e2e.ts
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_PHASES } from '../support/eventually.js';
import { deployHyperspool, eventually, GaveUp, leaderPod, openNamespace, OPERATOR_PODS, operatorRolledOut, repo, sh, SYSTEM, type Cluster, type FileNamespace, type OperatorPod } from './support/cluster.js';
import { incompleteJournals, journalsIn, openJournalDatabase, runsIn } from './support/sleepers.js';

const SHARDS = 4;
/**
 * The replicas' --lease-duration. The suite's 4 s (a renew deadline of 2.7 s) was too short for
 * shards on the shared 2-core node: as a crashed replica's shards moved to the survivor while 12
 * pass pods and two operator pods started, the survivor's renewals of its 5 Leases missed that
 * deadline, it gave every shard up, its caches started over and it was not Ready, so no replica
 * served people's requests (`spool signal` answered 503) for seconds. 10 s is still short enough
 * for a dead replica's shards to move within the test (one to two lease durations).
 */
const LEASE_SECONDS = 10;
const RUNS = 12;
const WORKFLOW = 'nap';
const SCRIPT = 'spool step a -- echo a\nspool sleep 3s\nspool wait signal go > /dev/null\nspool step b -- echo b\n';
/** Each run's calls, in order, once each. */
const CALLS = ['step a', 'sleep', 'wait.signal go', 'step b'];
const DEPLOYMENT = 'deployment/hyperspool-operator';
/** The Leases of shards and of replicas (src/operator/shards/shard-ownership.ts): the unsharded install has neither. */
const SHARDING_LEASE = /^hyperspool-operator-(shard|replica)-/;

interface LeaseResource {
  metadata: { name: string };
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

const shardLease = (shard: number): string => (shard === 0 ? 'hyperspool-operator' : `hyperspool-operator-shard-${shard}`);

describe.skipIf(Boolean(process.env.HYPERSPOOL_E2E_KUBECONFIG))('operator replicas sharing the runs in shards on a real node', () => {
  const namespace = `e2e-shards-${Date.now().toString(36)}`;
  let file: FileNamespace;
  let cluster: Cluster;
  const kubectl = (...args: string[]): Promise<string> => cluster.kubectl(...args);
  const spool = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', file.userConfig, '-n', namespace]);
  const operatorPods = async (): Promise<OperatorPod[]> => (await cluster.getJson<{ items: OperatorPod[] }>('-n', SYSTEM, 'pods', '-l', OPERATOR_PODS)).items;
  const scale = (replicas: number): Promise<string> => kubectl('-n', SYSTEM, 'scale', DEPLOYMENT, `--replicas=${replicas}`);
  const noOperatorPods = (): Promise<boolean> => eventually('no operator pod left', async () => (await operatorPods()).length === 0, 120_000);

  /**
   * The pod leading each shard (undefined: none alive): a Lease's holder is `POD@URL`, and it is
   * alive while renewed within its duration (this machine is the node: one clock).
   */
  const shardLeaders = async (): Promise<(string | undefined)[]> => {
    const leases = new Map((await cluster.getJson<{ items: LeaseResource[] }>('-n', SYSTEM, 'leases')).items.map((lease) => [lease.metadata.name, lease]));
    return Array.from({ length: SHARDS }, (_, shard) => {
      const spec = leases.get(shardLease(shard))?.spec;
      const renewed = Date.parse(spec?.renewTime ?? '');
      return spec?.holderIdentity && Date.now() < renewed + (spec.leaseDurationSeconds ?? 0) * 1000 ? spec.holderIdentity.split('@')[0] : undefined;
    });
  };
  /** Until every shard is led by one of the ready operator pods, and each of them leads some. */
  const untilShared = (replicas: number): Promise<string[]> =>
    eventually(
      `every shard led by one of ${replicas} live replicas, each leading some`,
      async () => {
        const ready = (await operatorPods()).filter((pod) => !pod.metadata.deletionTimestamp && pod.status?.containerStatuses?.[0]?.ready).map((pod) => pod.metadata.name);
        const leaders = await shardLeaders();
        const shared = ready.length === replicas && leaders.every((leader) => leader !== undefined && ready.includes(leader)) && ready.every((pod) => leaders.includes(pod));
        return shared && leaders.map((leader) => leader ?? '');
      },
      60_000,
    );

  /** What a person would look at when runs do not finish: the namespace's objects, the Leases, every replica's log. */
  const whereThingsAre = async (): Promise<string> =>
    [
      await kubectl('-n', namespace, 'get', 'runs,jobs,pods', '-o', 'wide').catch((error: Error) => error.message),
      await kubectl('-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp').catch((error: Error) => error.message),
      await kubectl('-n', SYSTEM, 'get', 'leases,pods', '-o', 'wide').catch((error: Error) => error.message),
      await kubectl('-n', SYSTEM, 'logs', '-l', OPERATOR_PODS, '--prefix', '--tail=400').catch((error: Error) => error.message),
    ].join('\n');

  const began = Date.now();
  const seconds = (): string => `${((Date.now() - began) / 1000).toFixed(0)} s`;

  beforeAll(async () => {
    file = await openNamespace(namespace);
    cluster = file.cluster;
    // --shards changes with no replica running (docs/operator.md#shards): two counts never overlap.
    await scale(0);
    await noOperatorPods();
    const args = '/spec/template/spec/containers/0/args';
    const patch = [
      ...['--shards', String(SHARDS)].map((value) => ({ op: 'add', path: `${args}/-`, value })),
      // The suite's Lease (test/e2e/deploy) is longer here: see LEASE_SECONDS.
      { op: 'test', path: `${args}/0`, value: '--lease-duration' },
      { op: 'replace', path: `${args}/1`, value: String(LEASE_SECONDS) },
    ];
    await kubectl('-n', SYSTEM, 'patch', DEPLOYMENT, '--type=json', '-p', JSON.stringify(patch));
    await scale(2);
    await operatorRolledOut(cluster);
    console.log(`e2e shards: the Deployment sharded after ${seconds()}`);
  });

  afterAll(async () => {
    if (!cluster) return;
    // The suite's install back, one shard again: down to no replica first, then the install's own
    // args and two replicas; the shards' and replicas' Leases go, as the unsharded operator uses neither.
    await scale(0);
    await noOperatorPods();
    const leases = (await cluster.getJson<{ items: LeaseResource[] }>('-n', SYSTEM, 'leases')).items.map((lease) => lease.metadata.name).filter((name) => SHARDING_LEASE.test(name));
    if (leases.length > 0) await kubectl('-n', SYSTEM, 'delete', 'lease', ...leases);
    const restoring = Date.now();
    await deployHyperspool(cluster);
    console.log(`e2e shards: the suite's install back in ${((Date.now() - restoring) / 1000).toFixed(0)} s`);
    await file.close();
  });

  it(`given ${SHARDS} shards over 2 replicas, when one replica's pod is killed and a third joins while runs wake and signals arrive, then every run succeeds with one Job per pass and each call once, and every shard is led by a live replica`, async () => {
    await untilShared(2);
    const jobs = watchJobs(cluster, namespace);
    try {
      const names = Array.from({ length: RUNS }, (_, i) => `${WORKFLOW}-${i + 1}`);
      await cluster.applyAs(
        file.userConfig,
        { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: WORKFLOW, namespace }, spec: { filename: `${WORKFLOW}.sh`, script: SCRIPT } },
        ...names.map((name) => ({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name, namespace }, spec: { workflowRef: { name: WORKFLOW } } })),
      );
      const signal = (some: string[]): Promise<string[]> => Promise.all(some.map((name) => spool('signal', name, 'go')));
      // Every run has begun (some asleep, some waking, some still in pass 1) when the chaos starts.
      await eventually('every run past its first pass', async () => {
        const runs = await runsIn(cluster, namespace);
        return runs.length === RUNS && runs.every((run) => (run.status?.passes ?? 0) >= 1);
      }, 90_000);
      await signal(names.slice(0, RUNS / 2));
      // The replica leading shard 0 (the cluster-wide work too) dies without a word; its shards'
      // Leases expire and the others take them. A third replica joins and is given its share.
      const killed = await leaderPod(cluster);
      await kubectl('-n', SYSTEM, 'delete', 'pod', killed, '--grace-period=0', '--force');
      await scale(3);
      await signal(names.slice(RUNS / 2));
      console.log(`e2e shards: every run begun, ${killed} killed and a replica added after ${seconds()}`);

      // All the Runs in one read a poll (a kubectl each would crowd the node's two cores), given up at once on one that ended otherwise.
      const done = await eventually('every run Succeeded', async () => {
        const runs = await runsIn(cluster, namespace);
        const ended = runs.find((run) => FINAL_PHASES.includes(run.status?.phase ?? '') && run.status?.phase !== 'Succeeded');
        if (ended) throw new GaveUp(`${ended.metadata.name} ended ${ended.status?.phase}: ${ended.status?.message}`);
        if (runs.every((run) => run.status?.phase === 'Succeeded')) return runs;
        // Said if the wait times out: where each run is.
        throw new Error(runs.map((run) => `${run.metadata.name} ${run.status?.phase ?? '-'} after ${run.status?.passes ?? 0} passes`).join(', '));
      }, 120_000);
      const leaders = await untilShared(3);
      expect(leaders).not.toContain(killed);

      // One Job per pass ever created: each pass number of a run once, from 1 to its passes.
      expect(jobs.ended(), 'the watch on Jobs ended early').toBe('');
      for (const run of done) {
        const passes = jobs.created.filter((job) => job.name.startsWith(`${run.metadata.name}-p`)).map((job) => Number(job.name.slice(`${run.metadata.name}-p`.length)));
        expect(passes.sort((a, b) => a - b), `${run.metadata.name}: ${await cluster.lostPasses(namespace, run.metadata.name)}`).toEqual(
          Array.from({ length: run.status?.passes ?? 0 }, (_, i) => i + 1),
        );
      }
      const journal = await openJournalDatabase(cluster);
      try {
        const journals = await journalsIn(journal.db, namespace);
        expect(journals.statuses).toEqual({ succeeded: RUNS });
        expect(journals.repeated).toEqual([]);
        expect(incompleteJournals(journals, CALLS)).toEqual([]);
      } finally {
        await journal.close();
      }
      console.log(`e2e shards: passes per run ${done.map((run) => run.status?.passes).join(' ')}; shards led at the end by ${leaders.join(' ')}; ${killed} killed; all done after ${seconds()}`);
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${await whereThingsAre()}`, { cause: error });
    } finally {
      jobs.stop();
    }
  }, 300_000);
});

/**
 * Every Job created in the namespace from now on, each once by its uid, as `kubectl get -w` sees
 * them: a pass's Job deleted and made again (a pass started twice) is two. Jobs go when their pass
 * ends (ttlSecondsAfterFinished), so only a watch sees them all.
 */
function watchJobs(cluster: Cluster, namespace: string): { created: { uid: string; name: string }[]; ended(): string; stop(): void } {
  const template = '{.metadata.uid} {.metadata.name}{"\\n"}';
  const watch = spawn(process.env.KUBECTL ?? 'kubectl', ['--kubeconfig', cluster.kubeconfig, '-n', namespace, 'get', 'jobs', '--watch', '-o', `jsonpath=${template}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const created: { uid: string; name: string }[] = [];
  let partial = '';
  let ended = '';
  watch.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const [uid = '', name = ''] = line.trim().split(' ');
      if (uid && !created.some((job) => job.uid === uid)) created.push({ uid, name });
    }
  });
  let said = '';
  watch.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
  watch.on('exit', (code) => (ended = `kubectl get --watch exited ${code}: ${said}`));
  return {
    created,
    ended: () => ended,
    stop: () => {
      watch.removeAllListeners('exit');
      watch.kill();
    },
  };
}
