import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { eventually, getRun, givenWorkflow, jobsOf, startCluster, startKubelet, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * A pipeline's `fan_out` with a `workflow:` body on a cluster: the body is another Workflow of the
 * namespace, by name, or a file of the parent Workflow's own bundle (its checkoutFrom ConfigMap),
 * read when the parent run starts and kept with it (never a file of the operator's filesystem,
 * which is nobody's checkout). Each item's child runs the body's script in pods of the body's own
 * settings (a bundle's file: the parent's).
 */
const PROBES = ['name: probes', 'jobs:', '  each:', '    fan_out:', '      items: [eu-north, us-east]', '      workflow: probe', ''].join('\n');
const PROBE = 'echo "$GREETING $(cat "$SPOOL_INPUT_FILE")"\n';

describe('fan_out with a workflow body on a cluster', () => {
  let cluster: Cluster;
  let operator: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-f');
    operator = await cluster.startLeader('op-fan-out');
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const patchWorkflow = (name: string, spec: object): Promise<unknown> =>
    cluster.custom.patchNamespacedCustomObject(
      { group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'workflows', name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

  it('given a fan_out naming the Workflow probe, when probe changes after the parent started, then each item ran probe as it was, with probe\'s env, and the job\'s results are their outputs', async () => {
    await givenWorkflow(cluster, 'probe', 'probe.sh', PROBE, [{ name: 'GREETING', value: 'probed' }]);
    await givenWorkflow(cluster, 'probes', 'probes.yaml', PROBES);
    await whenRunCreated(cluster, 'probes-1', 'probes');
    // Admitted (the run is in the store), and no pod has run anything yet: no kubelet plays.
    const runId = await eventually('probes-1 admitted', async () => {
      const id = (await getRun(cluster, 'probes-1')).status?.runId ?? '';
      return id && (await operator.store.getRun(id)) && id;
    });
    await patchWorkflow('probe', { script: 'echo changed too late\n', env: [{ name: 'GREETING', value: 'edited' }] });

    const kubelet = startKubelet(cluster, operator.url);
    try {
      const run = await eventually('probes-1 ended', async () => {
        const got = await operator.store.getRun(runId);
        return got && ['succeeded', 'failed'].includes(got.status) && got;
      }, 90_000);
      const children = (await operator.store.listRuns({ limit: 50 })).filter((child) => child.parentId === runId);
      expect(run.error, JSON.stringify(children.map((child) => [child.workflow, child.status, child.error]))).toBeNull();
      expect(run.status).toBe('succeeded');
      expect(children.map((child) => child.workflow).sort()).toEqual(['probes/probes.yaml#each[0]', 'probes/probes.yaml#each[1]']);
      expect(children.map((child) => child.script)).toEqual([PROBE, PROBE]);
      // Each item's pass pod has probe's settings (as pinned), not the parent's.
      for (const child of children) {
        const [job] = await jobsOf(cluster, child.id.slice(child.id.lastIndexOf(':') + 1));
        const env = job?.spec?.template.spec?.containers.find((c) => c.name === 'script')?.env ?? [];
        expect(env).toContainEqual({ name: 'GREETING', value: 'probed' });
      }
      const log = (await operator.store.readLogs(runId)).map((line) => line.text).join('');
      // The input file holds the item (in an envelope with the run's id).
      expect(log).toMatch(/^probed \{.*"input":"eu-north".*\}$/m);
      expect(log).toMatch(/^probed \{.*"input":"us-east".*\}$/m);
      expect(log).not.toContain('changed too late');
    } finally {
      await kubelet.stop();
    }
  });

  it('given a fan_out naming a Workflow that does not exist, then the Run waits saying which, and starts once it exists', async () => {
    await givenWorkflow(cluster, 'strays', 'strays.yaml', PROBES.replace('name: probes', 'name: strays').replace('workflow: probe', 'workflow: nowhere'));
    await whenRunCreated(cluster, 'strays-1', 'strays');
    const waiting = await eventually('strays-1 told', async () => {
      const run = await getRun(cluster, 'strays-1');
      return run.status?.message?.includes('nowhere') && run;
    });
    expect(waiting.status?.phase).toBe('Pending');
    expect(await operator.store.getRun(waiting.status?.runId ?? '')).toBeNull();
    expect(waiting.status?.message).toContain('fan_out names workflow: nowhere, and there is no Workflow nowhere in namespace team-f');
    await givenWorkflow(cluster, 'nowhere', 'nowhere.sh', 'echo here\n');
    await eventually('strays-1 admitted', async () => operator.store.getRun(waiting.status?.runId ?? ''), 30_000);
  });

  it("given a fan_out naming ./probe.sh, a file of the parent Workflow's checkoutFrom ConfigMap, then each item runs that file as it was when the parent started, in pods of the parent's settings", async () => {
    const bundled = 'echo "bundled $GREETING"\n';
    await cluster.core.createNamespacedConfigMap({
      namespace: cluster.namespace,
      body: { metadata: { name: 'probe-files' }, data: { 'probe.sh': bundled } },
    });
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: cluster.namespace,
      plural: 'workflows',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'local-probes' },
        spec: {
          filename: 'local-probes.yaml',
          script: PROBES.replace('name: probes', 'name: local-probes').replace('workflow: probe', 'workflow: ./probe.sh'),
          env: [{ name: 'GREETING', value: 'from the parent' }],
          checkoutFrom: { configMapRef: { name: 'probe-files' } },
        },
      },
    });
    await whenRunCreated(cluster, 'local-probes-1', 'local-probes');
    const runId = await eventually('local-probes-1 admitted', async () => {
      const id = (await getRun(cluster, 'local-probes-1')).status?.runId ?? '';
      return id && (await operator.store.getRun(id)) && id;
    });
    await cluster.core.patchNamespacedConfigMap(
      { namespace: cluster.namespace, name: 'probe-files', body: { data: { 'probe.sh': 'echo changed too late\n' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const kubelet = startKubelet(cluster, operator.url);
    try {
      const run = await eventually('local-probes-1 ended', async () => {
        const got = await operator.store.getRun(runId);
        return got && ['succeeded', 'failed'].includes(got.status) && got;
      }, 90_000);
      const children = (await operator.store.listRuns({ limit: 50 })).filter((child) => child.parentId === runId);
      expect(run.error, JSON.stringify(children.map((child) => [child.workflow, child.status, child.error]))).toBeNull();
      expect(children.map((child) => [child.script, child.interpreter])).toEqual([
        [bundled, 'bash -eu'],
        [bundled, 'bash -eu'],
      ]);
      const log = (await operator.store.readLogs(runId)).map((line) => line.text).join('');
      expect(log.match(/^bundled from the parent$/gm)).toHaveLength(2);
      expect(log).not.toContain('changed too late');
    } finally {
      await kubelet.stop();
    }
  });

  it('given a fan_out naming a file that is neither a Workflow nor in its checkoutFrom, then the Run waits naming both places', async () => {
    await cluster.core.createNamespacedConfigMap({ namespace: cluster.namespace, body: { metadata: { name: 'other-files' }, data: { 'other.sh': 'true\n' } } });
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: cluster.namespace,
      plural: 'workflows',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'lost-probes' },
        spec: {
          filename: 'lost-probes.yaml',
          script: PROBES.replace('name: probes', 'name: lost-probes').replace('workflow: probe', 'workflow: ./missing.sh'),
          checkoutFrom: { configMapRef: { name: 'other-files' } },
        },
      },
    });
    await whenRunCreated(cluster, 'lost-probes-1', 'lost-probes');
    const waiting = await eventually('lost-probes-1 told', async () => {
      const run = await getRun(cluster, 'lost-probes-1');
      return run.status?.message?.includes('missing.sh') && run;
    });
    expect(waiting.status?.phase).toBe('Pending');
    expect(waiting.status?.message).toContain(
      'fan_out names workflow: ./missing.sh, and there is no Workflow ./missing.sh in namespace team-f nor a file missing.sh in ConfigMap other-files (its checkoutFrom)',
    );
  });
});
