// `npm run bench:cluster`: the benchmarks that need a real cluster (see pass-start.bench.ts). They
// run under vitest to share the e2e suite's cluster harness (test/e2e/support), written in TypeScript.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['bench/cluster/**/*.bench.ts'],
    // The e2e suite's: the node brought up (unless up) and the images built, once (openCluster needs it).
    globalSetup: ['test/e2e/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 1_800_000,
    hookTimeout: 600_000,
  },
});
