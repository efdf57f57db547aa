#!/usr/bin/env node
// Writes test/durations.json, the seconds each test file took, from the last whole run's JSON
// report (test-results/unit.json): test/support/longest-first.ts starts the longest files first.
// Run it after a whole `npm test` when files were added or grew slow, and commit what it writes.
//
//   node scripts/test-durations.mjs
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** The checkout a reported file is in (the report may come from another clone): where package.json is. */
function checkoutOf(file) {
  let dir = dirname(file);
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
const report = JSON.parse(readFileSync(new URL('../test-results/unit.json', import.meta.url), 'utf8'));
const seconds = {};
for (const file of report.testResults ?? []) {
  const path = relative(checkoutOf(file.name), file.name);
  // An in-script file runs once per client: the longer of its runs.
  seconds[path] = Math.max(seconds[path] ?? 0, Math.round((file.endTime - file.startTime) / 100) / 10);
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a));
const about = 'Seconds each test file took in a whole npm test (scripts/test-durations.mjs): the longest start first (test/support/longest-first.ts).';
writeFileSync(new URL('../test/durations.json', import.meta.url), `${JSON.stringify({ about, seconds: sorted }, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`);
