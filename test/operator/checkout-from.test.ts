import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { GaveUp, eventually, getRun, startCluster, startKubelet, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * A Workflow names its bundle on a cluster (issue 20): spec.checkoutFrom's ConfigMap becomes the
 * run's `spool checkout` files, stored when the run is admitted, so each pass (each its own pod,
 * here a process of the test kubelet in its own directory) unpacks the same files.
 */
describe('Workflow checkoutFrom', () => {
  let cluster: Cluster;
  let operator: Operator;
  let kubelet: { stop(): Promise<void> };
  let store: SqlStore;

  beforeAll(async () => {
    cluster = await startCluster('team-co');
    operator = await cluster.startLeader('op-checkout');
    kubelet = startKubelet(cluster, operator.url);
    store = await openPostgresStore(cluster.postgres.url, { max: 2 });
  }, 300_000);

  afterAll(async () => {
    await kubelet?.stop();
    await store?.close();
    await cluster?.stop();
  });

  // Pass 1 deletes the files after using them: pass 2 has them only if it checks them out again.
  const SCRIPT = `set -euo pipefail
spool checkout
echo "pass $SPOOL_PASS: $(bash greet.sh) $(cat config.json) $(od -An -tx1 blob.bin | tr -d ' \\n')"
rm -f greet.sh config.json blob.bin
spool sleep 1s
`;

  it('given a Workflow whose checkoutFrom ConfigMap is missing, then its Run waits saying so; once the ConfigMap exists, each pass checks out its files (binaryData byte for byte)', async () => {
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-co',
      plural: 'workflows',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'tools' },
        spec: { filename: 'tools.sh', script: SCRIPT, checkoutFrom: { configMapRef: { name: 'tools-files' } } },
      },
    });
    await whenRunCreated(cluster, 'tools-1', 'tools');

    const waiting = await eventually('the Run waiting for its ConfigMap', async () => {
      const run = await getRun(cluster, 'tools-1');
      return (
        run.status?.message?.includes('ConfigMap tools-files (its checkoutFrom) not found in namespace team-co') && run
      );
    });
    expect(waiting.status?.phase).toBe('Pending');

    await cluster.core.createNamespacedConfigMap({
      namespace: 'team-co',
      body: {
        metadata: { name: 'tools-files' },
        data: { 'greet.sh': 'echo "hello from $(basename "$0")"\n', 'config.json': '{"region":"eu"}' },
        binaryData: { 'blob.bin': Buffer.from([0, 255, 1]).toString('base64') },
      },
    });
    const done = await eventually(
      'tools-1 Succeeded',
      async () => {
        const run = await getRun(cluster, 'tools-1');
        if (run.status?.phase === 'Failed') throw new GaveUp(`tools-1 failed: ${run.status.message}`);
        return run.status?.phase === 'Succeeded' && run;
      },
      120_000,
    );

    expect(done.status?.passes).toBe(2);
    const log = (await store.readLogs(done.status?.runId ?? '')).map((line) => line.text).join('');
    expect(log.split('\n').filter(Boolean)).toEqual([
      'spool checkout: 3 files into .',
      'pass 1: hello from greet.sh {"region":"eu"} 00ff01',
      'spool checkout: 3 files into .',
      'pass 2: hello from greet.sh {"region":"eu"} 00ff01',
    ]);
  }, 240_000);
});
