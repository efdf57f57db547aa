import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { PASS_QUOTA_ANNOTATION } from '../../src/operator/passes/pass-quota.js';
import { untilPhase, getRun, givenWorkflow, startCluster, startKubelet, whenRunCreated, type Cluster } from './support/cluster.js';

/** One pass of three seconds: passes of runs created together overlap unless something holds them back. */
const SCRIPT = 'spool step work -- sleep 3\n';

/**
 * How many passes run at once: the operator's --max-running-passes for all namespaces, and a
 * namespace's own hyperspool.dev/max-running-passes below it, so waking runs never flood the node.
 * Counted from the store while the runs go (a run is `running` from its pass's start to its end).
 */
describe('passes at once: --max-running-passes and a namespace’s quota', () => {
  let cluster: Cluster;
  let operator: Operator;
  let kubelet: { stop(): Promise<void> };

  beforeAll(async () => {
    cluster = await startCluster('team-q');
    operator = await cluster.startLeader('op-quota', { maxRunningPasses: 2 });
    await givenWorkflow(cluster, 'work', 'work.sh', SCRIPT);
    kubelet = startKubelet(cluster, operator.url);
  }, 180_000);

  afterAll(async () => {
    await kubelet?.stop();
    await cluster?.stop();
  });

  /** Creates these Runs at once and answers the most passes that ran at one time until all succeeded. */
  async function mostAtOnce(names: string[]): Promise<number> {
    let most = 0;
    let done = false;
    const counting = (async () => {
      while (!done) {
        const running = await operator.store.listRuns({ status: ['running'], limit: 100 });
        most = Math.max(most, running.filter((run) => run.project === cluster.namespace).length);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await Promise.all(names.map((name) => whenRunCreated(cluster, name, 'work')));
    try {
      for (const name of names) await untilPhase(`run ${name}`, () => getRun(cluster, name), 'Succeeded', 120_000);
    } finally {
      done = true;
      await counting;
    }
    return most;
  }

  it('given --max-running-passes 2, when three runs are due at once, then two passes run at a time and all three succeed', async () => {
    expect(await mostAtOnce(['cap-1', 'cap-2', 'cap-3'])).toBe(2);
  }, 180_000);

  it('given the namespace annotated with a quota of 1, when two runs are due at once, then their passes take turns and both succeed', async () => {
    await cluster.core.patchNamespace(
      { name: cluster.namespace, body: [{ op: 'add', path: `/metadata/annotations`, value: { [PASS_QUOTA_ANNOTATION]: '1' } }] },
    );
    // The operator reads the annotation with a 5 s cache.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    expect(await mostAtOnce(['quota-1', 'quota-2'])).toBe(1);
  }, 180_000);
});
