// The end-to-end suite: a real single-node Kubernetes (hack/local-cluster.sh) whose pods really run
// the runner image (hack/images.sh). Needs root. Not part of `npm test` (its files end in .e2e.ts,
// which the root vitest.config.ts does not include):
//
//   npx vitest run --config test/e2e/vitest.config.ts
//
// Its global setup (support/global-setup.ts) brings the local cluster up if it is not running and
// takes it down again afterwards (a cluster that was already up is left up), and rebuilds dist/
// and the images and imports them, once for all the files.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { UpgradeFirst } from './support/upgrade-first.js';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/e2e/**/*.e2e.ts'],
    globalSetup: ['test/e2e/support/global-setup.ts'],
    pool: 'forks',
    // One node, one netns: the files take turns. Running recipes, artifacts and ui at once was
    // tried (2026-12-05): on 2 cores each took three times as long and artifacts' waits timed out.
    maxWorkers: 1,
    fileParallelism: false,
    sequence: { sequencer: UpgradeFirst },
    testTimeout: 300_000,
    hookTimeout: 600_000,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/e2e.json' },
  },
});
