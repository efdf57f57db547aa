// The node's own processes crash while passes run: kube-apiserver, then the kubelet, each killed
// (SIGKILL) and started again by `hack/local-cluster.sh restart`, as a supervisor would. Runs in
// flight must all finish, and nothing a run recorded is done again: each step is in the journal
// once and printed once. Needs the local node (it kills its processes); skipped on a cluster given
// by HYPERSPOOL_E2E_KUBECONFIG.
//
//   npm run test:e2e -- test/e2e/node-restarts.e2e.ts
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GaveUp, deployHyperspool, E2E_LABEL, eventually, openCluster, repo, sh, SYSTEM, type Cluster } from './support/cluster.js';

/** Four passes, each a step of two seconds (so one is in flight when a process dies) and a sleep. */
const SCRIPT = `for i in 1 2 3 4; do
  spool step "s$i" -- sh -c "sleep 2; echo step $i"
  spool sleep 1s
done
`;
const RUNS = ['steady-1', 'steady-2', 'steady-3'];

interface RunResource {
  status?: { phase?: string; message?: string; passes?: number };
}

interface JournalEntry {
  kind: string;
  verb: string;
  name: string;
}

describe.skipIf(Boolean(process.env.HYPERSPOOL_E2E_KUBECONFIG))('the node’s processes restart while passes run', () => {
  const runLabel = `e2e-restarts-${Date.now().toString(36)}`;
  const namespace = runLabel;
  let cluster: Cluster;
  let userConfig = '';
  const spool = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', userConfig, '-n', namespace]);
  const phaseOf = async (name: string): Promise<string> => {
    // While kube-apiserver is down a read fails: no phase then.
    const run = await cluster.getJson<RunResource>('-n', namespace, 'run', name).catch((): RunResource => ({}));
    return run.status?.phase ?? '';
  };
  const phases = (): Promise<string[]> => Promise.all(RUNS.map(phaseOf));
  const restart = (...names: string[]): Promise<string> => sh('bash', [join(repo, 'hack', 'local-cluster.sh'), 'restart', ...names]);

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
  });

  afterAll(async () => {
    if (!cluster) return;
    if (!process.env.HYPERSPOOL_E2E_KEEP) {
      await cluster.kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
      await cluster.kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    }
    await cluster.close();
  });

  it('given three runs of four passes, when kube-apiserver and then the kubelet are killed and started again mid-pass, then every run succeeds and each step is recorded and printed once', async () => {
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'steady', namespace }, spec: { filename: 'steady.sh', script: SCRIPT } },
      ...RUNS.map((name) => ({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name, namespace }, spec: { workflowRef: { name: 'steady' } } })),
    );
    await eventually('a pass under way', async () => (await phases()).includes('Running'), 120_000);
    await restart('kube-apiserver');
    console.log(`e2e: kube-apiserver restarted; runs ${(await phases()).join(', ')}`);
    // Some pass is in flight again (or the runs are between passes) before the kubelet goes.
    await eventually('a run running again', async () => (await phases()).includes('Running'), 120_000);
    await restart('kubelet');
    console.log(`e2e: kubelet restarted; runs ${(await phases()).join(', ')}`);

    await eventually(
      'every run Succeeded',
      async () => {
        const now = await phases();
        if (now.includes('Failed')) throw new GaveUp(`a run failed: ${now.join(', ')}\n${await cluster.operatorLogs()}`);
        return now.every((phase) => phase === 'Succeeded');
      },
      420_000,
    );
    for (const name of RUNS) {
      const journal = (JSON.parse(await spool('journal', name, '--json')) as JournalEntry[]).filter((entry) => entry.kind === 'call' && entry.verb === 'step');
      expect(journal.map((entry) => entry.name)).toEqual(['s1', 's2', 's3', 's4']);
      expect(await spool('logs', name)).toBe('step 1\nstep 2\nstep 3\nstep 4\n');
    }
  }, 600_000);
});
