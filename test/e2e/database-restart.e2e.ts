// PostgreSQL goes away on the real node (issue 19, item 3): the install's database pod is stopped
// while runs sleep, wait on a signal and are in the middle of a step, and started again on the same
// claim a while later, as a node drain or a crash and a rescheduling would. While it is away the
// operator's replicas stop being Ready (their /readyz asks the database) and a person's signal is
// refused; once it is back everything resumes by itself: every run finishes and each call is
// recorded once (the pass in flight may be lost and replayed, never failed nor recorded twice).
// The database's data is on its PersistentVolumeClaim, so the files after this one find the
// install as they left it.
//
//   npm run test:e2e -- test/e2e/database-restart.e2e.ts
//
// Passed on the shared 2-core node at a load of ~20 in 153 s (replicas not Ready 39 s after the
// stop, which includes the pod's 5 s grace and the probe's two failures; the database and the
// operator back at 50 s).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GaveUp, deployHyperspool, E2E_LABEL, eventually, openCluster, OPERATOR_PODS, repo, sh, SYSTEM, type Cluster } from './support/cluster.js';

const WORKFLOWS = {
  // Asleep through the outage (its timer may come due during it or after).
  sleeper: 'spool step a -- echo a\nspool sleep 45s\nspool step b -- echo b\n',
  // Signalled only once the database is back (the signal sent while it is away is refused).
  waiter: 'spool step a -- echo a\nspool wait signal go --timeout 10m\nspool step b -- echo b\n',
  // In step slow when the database goes; the step ends while it is away.
  busy: "spool step a -- echo a\nspool step slow -- sh -c 'echo half; sleep 30; echo done'\nspool step c -- echo c\n",
};
type Name = keyof typeof WORKFLOWS;
const NAMES = Object.keys(WORKFLOWS) as Name[];

interface RunResource {
  status?: { phase?: string; message?: string; awaiting?: string; passes?: number };
  metadata: { labels?: Record<string, string> };
}

interface PodResource {
  metadata: { name: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

const DATABASE = 'app.kubernetes.io/name=hyperspool-postgres';

describe('PostgreSQL goes away on the node', () => {
  const runLabel = `e2e-db-${Date.now().toString(36)}`;
  const namespace = runLabel;
  let cluster: Cluster;
  let userConfig = '';
  const spool = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', userConfig, '-n', namespace]);
  const runOf = (name: Name): Promise<RunResource> => cluster.getJson<RunResource>('-n', namespace, 'run', `${name}-1`);
  const podsOf = async (selector: string): Promise<PodResource[]> => (await cluster.getJson<{ items: PodResource[] }>('-n', SYSTEM, 'pods', '-l', selector)).items;
  const ready = (pod: PodResource): boolean => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  /** The database back as the install has it: one replica, Ready, and the operator serving again. */
  const givenDatabaseRunning = async (): Promise<void> => {
    await cluster.kubectl('-n', SYSTEM, 'scale', 'deployment/hyperspool-postgres', '--replicas=1');
    await cluster.kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-postgres', '--timeout=180s');
    await cluster.kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-operator', '--timeout=180s');
    await cluster.kubectl('wait', '--for=condition=Available', '--timeout=120s', 'apiservice/v1alpha1.api.hyperspool.dev');
  };

  /** What a person would look at when a run does not finish: the runs, their Jobs and pods, and the operator's log. */
  const whereRunsAre = async (): Promise<string> =>
    [
      await cluster.kubectl('-n', namespace, 'get', 'runs,jobs,pods', '-o', 'wide').catch((error: Error) => error.message),
      await cluster.kubectl('-n', namespace, 'get', 'runs', '-o', 'yaml').catch((error: Error) => error.message),
      await cluster.operatorLogs(),
    ].join('\n');

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
  });

  afterAll(async () => {
    if (!cluster) return;
    // Whatever happened above, the next files need the database and the operator.
    await givenDatabaseRunning().catch((error: Error) => console.error(`e2e: the database did not come back: ${error.message}`));
    if (!process.env.HYPERSPOOL_E2E_KEEP) {
      await cluster.kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
      await cluster.kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    }
    await cluster.close();
  });

  it('given runs asleep, waiting on a signal and mid-step, when the database pod stops and starts again, then the operator is not Ready meanwhile, a signal is refused, and every run finishes with each call recorded once', async () => {
    await cluster.apply(
      ...NAMES.flatMap((name) => [
        { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, namespace }, spec: { filename: `${name}.sh`, script: WORKFLOWS[name] } },
        { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: `${name}-1`, namespace }, spec: { workflowRef: { name } } },
      ]),
    );
    await eventually('the busy run labelled', async () => (await runOf('busy')).metadata.labels?.['hyperspool.dev/run'], 60_000);
    await eventually('the waiter waiting', async () => (await runOf('waiter')).status?.awaiting === 'signal go', 180_000);
    await eventually('the busy run in step slow', async () => (await cluster.kubectl('-n', namespace, 'logs', 'job/busy-1-p1', '-c', 'script').catch(() => '')).includes('half'), 120_000);

    // Stopped as a drain stops it (SIGTERM), with a short grace: PostgreSQL's smart shutdown would
    // otherwise wait the whole 30 s for the operator's pooled connections to close.
    const stoppedAt = Date.now();
    await cluster.kubectl('-n', SYSTEM, 'scale', 'deployment/hyperspool-postgres', '--replicas=0');
    await cluster.kubectl('-n', SYSTEM, 'delete', 'pod', '-l', DATABASE, '--grace-period=5', '--wait=true');
    // The readiness probe (every 5 s, 2 failures) takes both replicas out of their Service.
    await eventually('no operator replica Ready', async () => (await podsOf(OPERATOR_PODS)).every((pod) => !ready(pod)), 60_000);
    console.log(`e2e: operator replicas not Ready ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after the database stopped`);
    // A person's signal while the database is away: refused in one line, nothing recorded.
    const refused = await spool('signal', 'waiter-1', 'go').then(
      () => '',
      (error: Error) => error.message,
    );
    expect(refused).not.toBe('');
    // Away long enough for step slow to end meanwhile.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, stoppedAt + 35_000 - Date.now())));
    expect((await podsOf(OPERATOR_PODS)).every((pod) => !ready(pod))).toBe(true);

    await givenDatabaseRunning();
    console.log(`e2e: the database and the operator back ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after the database stopped`);
    await eventually('the waiter still waiting', async () => (await runOf('waiter')).status?.awaiting === 'signal go', 60_000);
    await spool('signal', 'waiter-1', 'go');

    for (const name of NAMES)
      await eventually(
        `${name}-1 Succeeded`,
        async () => {
          const run = await runOf(name);
          if (run.status?.phase === 'Failed') throw new GaveUp(`${name}-1 failed: ${run.status.message}`);
          return run.status?.phase === 'Succeeded';
        },
        180_000,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await whereRunsAre()}`);
      });
    const calls = async (name: Name): Promise<string[]> =>
      (JSON.parse(await spool('journal', `${name}-1`, '--json')) as { kind: string; verb: string; name: string }[])
        .filter((entry) => entry.kind === 'call')
        .map((entry) => `${entry.verb} ${entry.name}`.trim());
    expect(await calls('sleeper')).toEqual(['step a', 'sleep', 'step b']);
    expect(await calls('waiter')).toEqual(['step a', 'wait.signal go', 'step b']);
    expect(await calls('busy')).toEqual(['step a', 'step slow', 'step c']);
    // The signal sent while the database was away was not kept: the waiter took the one sent after.
    expect(await spool('logs', 'waiter-1')).toBe('a\nb\n');
    expect(await spool('logs', 'sleeper-1')).toBe('a\nb\n');
    console.log(`e2e: passes after the restart: ${(await Promise.all(NAMES.map(async (name) => `${name} ${(await runOf(name)).status?.passes}`))).join(', ')}`);
  }, 420_000);
});
