#!/usr/bin/env node
// Prints the slowest tests and files of the last runs, from the JSON reports vitest writes into
// test-results/ (vitest.config.ts and test/e2e/vitest.config.ts): what docs/testing.md cites and
// what .ci/run prints at its end, so a suite that grows slow is seen in the run that made it so.
//
//   node scripts/slowest-tests.mjs [count]      # default 10
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const count = Number(process.argv[2] ?? 10);
const dir = new URL('../test-results/', import.meta.url).pathname;
const root = new URL('..', import.meta.url).pathname;
const reports = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')) : [];
if (!reports.length) {
  process.stderr.write('slowest-tests: no reports in test-results/ (run the tests first)\n');
  process.exit(1);
}

const tests = [];
const files = [];
for (const report of reports) {
  const { testResults = [] } = JSON.parse(readFileSync(join(dir, report), 'utf8'));
  for (const file of testResults) {
    const path = relative(root, file.name);
    files.push({ name: path, ms: file.endTime - file.startTime, suite: report.replace(/\.json$/, '') });
    for (const test of file.assertionResults ?? []) {
      tests.push({ name: `${path} > ${test.fullName}`, ms: test.duration ?? 0, status: test.status, suite: report.replace(/\.json$/, '') });
    }
  }
}

const seconds = (ms) => `${(ms / 1000).toFixed(1).padStart(7)} s`;
const top = (rows) => [...rows].sort((a, b) => b.ms - a.ms).slice(0, count);
process.stdout.write(`The ${count} slowest tests (${tests.length} in ${reports.join(', ')}):\n`);
for (const test of top(tests)) process.stdout.write(`${seconds(test.ms)}  [${test.suite}] ${test.name}${test.status === 'passed' ? '' : ` (${test.status})`}\n`);
process.stdout.write(`The ${count} slowest files (${files.length}; npm test runs two files at a time and some files run their tests at once, so times overlap):\n`);
for (const file of top(files)) process.stdout.write(`${seconds(file.ms)}  [${file.suite}] ${file.name}\n`);
