import { inject } from 'vitest';
import { deployHyperspool, SYSTEM, type Cluster } from '../../test/e2e/support/cluster.js';

/**
 * Hyperspool for a bench: this build, installed on a node the bench brought up itself; on a cluster
 * it found (someone's quickstart, the e2e suite's node left up), the install that is there, left as
 * it is, unless BENCH_INSTALL=1 asks to install this build over it (the e2e suite's settings: a 4 s
 * Lease, S3 artifacts).
 */
export async function hyperspoolFor(cluster: Cluster): Promise<void> {
  if (inject('e2eOwnCluster') || process.env.BENCH_INSTALL === '1') return deployHyperspool(cluster);
  const installed = await cluster.kubectl('-n', SYSTEM, 'get', 'deployment', 'hyperspool-operator', '-o', 'name').catch(() => '');
  if (!installed.trim()) {
    throw new Error(`the cluster this bench found has no Hyperspool in ${SYSTEM}, and a bench installs over a cluster it did not bring up only when told: BENCH_INSTALL=1`);
  }
  console.log(`bench: using the Hyperspool installed in ${SYSTEM} as it is (BENCH_INSTALL=1 installs this build over it)`);
}

/** Results go into the tracked docs/benchmarks.md only when asked: BENCH_WRITE=1. */
export const writeResults = (): boolean => process.env.BENCH_WRITE === '1';
