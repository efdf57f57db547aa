import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/longest-first.js';

/**
 * The in-script acceptance suites (recipes, crash and resume, determinism, bad input, exit codes,
 * output, suspension, artifacts and checkouts) run twice: once with the native client first on the
 * scripts' PATH and once with the Node client (SPOOL_CLIENT, read by src/agent/script-client.ts),
 * so the two cannot drift. The other `spool dev` suites test the server and the control CLI
 * (submit, logs, events, schedules, a restart, replay, rerun): their scripts' calls are the
 * in-script suites' own, so they run once, with the native client.
 */
const IN_SCRIPT = [
  'test/run/**/*.test.ts',
  'test/dev/scripts.test.ts',
  'test/dev/output-bytes.test.ts',
  'test/dev/artifacts.test.ts',
  'test/dev/checkout.test.ts',
  'test/dev/tracing.test.ts',
];
const ALL = ['test/**/*.test.ts', 'src/**/*.test.ts', 'sdk/typescript/test/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // These tests start real processes (scripts, servers, PostgreSQL); two at a time suits 2 cores.
    maxWorkers: 2,
    // The files that took longest last time start first, so the run does not end on one of them.
    sequence: { sequencer: LongestFirst },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The JSON report is what scripts/slowest-tests.mjs reads (docs/testing.md's slowest tests).
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/unit.json' },
    projects: [
      { extends: true, test: { name: 'native-client', include: IN_SCRIPT, env: { SPOOL_CLIENT: 'native' } } },
      { extends: true, test: { name: 'node-client', include: IN_SCRIPT, env: { SPOOL_CLIENT: 'node' } } },
      { extends: true, test: { name: 'unit', include: ALL, exclude: [...configDefaults.exclude, ...IN_SCRIPT] } },
    ],
  },
});
