// The end-to-end suite: a real single-node Kubernetes (hack/local-cluster.sh) whose pods really run
// the runner image (hack/images.sh). Needs root. Not part of `npm test` (its files end in .e2e.ts,
// which the root vitest.config.ts does not include):
//
//   npx vitest run --config test/e2e/vitest.config.ts
//
// Its global setup (support/global-setup.ts) brings the local cluster up if it is not running and
// takes it down again afterwards (a cluster that was already up is left up), and rebuilds dist/
// and the images and imports them, once for all the files.
//
// Files that only add their own namespaces run at once (group 0); files that take something
// cluster-wide away from under the others (the leader pod, PostgreSQL, kube-apiserver and the
// kubelet, the whole install, the node's capacity) take turns after them (group 1). A new file
// goes in group 1 unless it is known to disturb nothing another file relies on.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = { root, pool: 'forks' as const, testTimeout: 300_000, hookTimeout: 600_000 };
const alongside = ['recipes', 'artifacts', 'ui'].map((name) => `test/e2e/${name}.e2e.ts`);

export default defineConfig({
  test: {
    ...shared,
    // Here, not in the projects: a project's own globalSetup would bring the node up again.
    globalSetup: ['test/e2e/support/global-setup.ts'],
    projects: [
      { root, test: { ...shared, name: 'alongside', include: alongside, maxWorkers: alongside.length, sequence: { groupOrder: 0 } } },
      {
        root,
        test: { ...shared, name: 'in turn', include: ['test/e2e/**/*.e2e.ts'], exclude: alongside, maxWorkers: 1, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
