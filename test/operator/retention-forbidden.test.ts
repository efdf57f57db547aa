import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/common/json-log.js';
import type { Operator } from '../../src/operator/operator.js';
import { untilPhase, agentOf, eventually, getRun, givenPodOf, jobsOf, startCluster, whenJobFinishes, whenRunCreated, type Cluster } from './support/cluster.js';

const GROUP = { group: 'hyperspool.dev', version: 'v1alpha1' };

/**
 * Retention when the API server refuses its delete: the operator's ClusterRole once lacked delete
 * on runs, and each expired Run cost a kilobyte-long error line every sweep, counted nowhere.
 */
describe('retention of a Run the operator may not delete', () => {
  let cluster: Cluster;
  let operator: Operator;
  const lines: Record<string, unknown>[] = [];
  let rbac: RbacAuthorizationV1Api;

  /** config/rbac's ClusterRole, with or without delete on runs. */
  async function operatorMayDeleteRuns(may: boolean): Promise<void> {
    if (may) {
      cluster.kubectl('apply', '--server-side', '--force-conflicts', '-f', 'config/rbac/role.yaml');
      return;
    }
    const role = await rbac.readClusterRole({ name: 'hyperspool-operator' });
    for (const rule of role.rules ?? []) if (rule.resources?.includes('runs')) rule.verbs = rule.verbs.filter((verb) => verb !== 'delete');
    await rbac.replaceClusterRole({ name: 'hyperspool-operator', body: role });
  }

  const errorsCounted = async (): Promise<number> => {
    const text = await (await fetch(`${operator.healthUrl}/metrics`)).text();
    return Number(/^hyperspool_reconcile_errors_total\{kind="Run",namespace="team-rf",reason="Forbidden"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    cluster = await startCluster('team-rf');
    rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await operatorMayDeleteRuns(false);
    operator = await cluster.startLeader('op-rf', { log: jsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>)) });
    await cluster.custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: 'team-rf',
      plural: 'workflows',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'brief' }, spec: { filename: 'brief.sh', script: 'true\n', ttlSecondsAfterFinished: 0 } },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('given a ClusterRole without delete on runs, when a Run expires, then each refused delete is counted and retried with backoff, and logged once in one short line; once granted, the Run goes', async () => {
    await whenRunCreated(cluster, 'brief-1', 'brief');
    const key = await eventually('the run key label', async () => (await getRun(cluster, 'brief-1')).metadata.labels?.['hyperspool.dev/run']);
    const job = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0]);
    const runId = (await getRun(cluster, 'brief-1')).status?.runId ?? '';
    expect((await agentOf(operator.url, runId, 1, (await givenPodOf(cluster, job)).token).exit(0)).status).toBe(200);
    await whenJobFinishes(cluster, job);
    await untilPhase('run brief-1', () => getRun(cluster, 'brief-1'), 'Succeeded');

    // Refused several times over: every refusal counted, by its reason.
    await eventually('three refused deletes counted', async () => (await errorsCounted()) >= 3, 30_000);
    // Backoff: the sweep looks every 200 ms (15 times in 3 s), but a failing key waits 0.1 s
    // doubling (each delay jittered down to half), so from its third failure on no more than four
    // tries fit in 3 s (0.2 + 0.4 + 0.8 + 1.6 s at the shortest).
    const before = await errorsCounted();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await errorsCounted()) - before).toBeLessThanOrEqual(4);
    expect(await getRun(cluster, 'brief-1')).toMatchObject({ status: { phase: 'Succeeded' } });

    // One line for the same error however often it recurs, and a short one: the API server's
    // reason and message, not client-node's dump of the response's body and headers.
    const said = lines.filter((line) => line.level === 'error' && line.name === 'brief-1');
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ msg: 'reconcile failed', kind: 'Run', namespace: 'team-rf' });
    expect(String(said[0]?.error)).toMatch(/^403 Forbidden: runs\.hyperspool\.dev "brief-1" is forbidden: .*cannot delete resource "runs"/);
    expect(JSON.stringify(said[0]).length).toBeLessThan(600);

    await operatorMayDeleteRuns(true);
    await eventually('brief-1 deleted', async () => {
      const runs = (await cluster.custom.listNamespacedCustomObject({ ...GROUP, namespace: 'team-rf', plural: 'runs' })) as { items: unknown[] };
      return runs.items.length === 0;
    }, 90_000);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'finished Run deleted', name: 'brief-1', runId }));
  });
});
