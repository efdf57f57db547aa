#!/usr/bin/env node
/**
 * A newcomer's first run: `spool run examples/saga.sh` on an empty data directory, then again with
 * that data directory there, beside `node -e 0`; and opening the in-memory embedded store
 * (`openPgliteStore()`, what `spool test` and `spool replay` open per invocation), and what that
 * process keeps resident once the store is open (after a full GC).
 *
 *   npm run build && node bench/first-run.mjs     # prints a Markdown table (docs/benchmarks.md)
 *
 * BENCH_FIRST_RUNS samples of each (default 7). Wall time is taken around the process; peak RSS is
 * GNU time's %M: the largest resident set of any one process of the tree (here the CLI's Node,
 * which holds the embedded PostgreSQL), not their sum. saga.sh fails on purpose (the car cannot be
 * booked, the rollback runs), so `spool run` exits 1; each sample checks that the rollback ran.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib/stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number.parseInt(process.env.BENCH_FIRST_RUNS ?? '', 10) || 7;
const TIME = '/usr/bin/time';
if (!existsSync(TIME)) throw new Error(`${TIME} (GNU time) is needed for the peak RSS`);

const scratch = mkdtempSync(join(tmpdir(), 'spool-first-run-'));
// A private copy of the build, so that a `npm run build` elsewhere cannot swap files under the bench.
const TREE = join(scratch, 'tree');
for (const part of ['bin', 'dist', 'examples']) cpSync(join(ROOT, part), join(TREE, part), { recursive: true });
cpSync(join(ROOT, 'package.json'), join(TREE, 'package.json'));
symlinkSync(join(ROOT, 'node_modules'), join(TREE, 'node_modules'), 'dir');
const log = (line) => process.stderr.write(`[first-run] ${line}\n`);

/** Runs argv under GNU time in cwd: { ms, rssMiB, stdout, stderr }. */
function timed(argv, cwd) {
  const start = process.hrtime.bigint();
  const result = spawnSync(TIME, ['-f', 'PEAK_RSS_KIB %M', ...argv], { cwd, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const rss = /PEAK_RSS_KIB (\d+)/.exec(result.stderr);
  if (!rss) throw new Error(`no peak RSS from ${argv.join(' ')}: ${result.stderr}`);
  return { ms, rssMiB: Number(rss[1]) / 1024, stdout: result.stdout, stderr: result.stderr };
}

function saga(dataDir, cwd) {
  const sample = timed(
    ['node', join(TREE, 'bin/spool'), 'run', join(TREE, 'examples/saga.sh'), '--data-dir', dataDir],
    cwd,
  );
  if (!sample.stdout.includes('cancelled FL-881'))
    throw new Error(`saga.sh did not roll back:\n${sample.stdout}${sample.stderr}`);
  return sample;
}

const rows = { node: [], empty: [], there: [], memory: [] };
const OPEN_MEMORY = `const { openPgliteStore } = await import(${JSON.stringify(join(TREE, 'dist/store/pglite.js'))});
const t = performance.now(); const store = await openPgliteStore(); const ms = performance.now() - t;
globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 50)); globalThis.gc();
console.log('OPEN_MS', ms, 'HELD_KIB', process.memoryUsage().rss / 1024); await store.close();`;

for (let i = 0; i < RUNS; i++) {
  log(`round ${i + 1}/${RUNS}`);
  rows.node.push(timed(['node', '-e', '0'], scratch));
  const cwd = mkdtempSync(join(scratch, 'run-'));
  rows.empty.push(saga(join(cwd, '.spool'), cwd));
  rows.there.push(saga(join(cwd, '.spool'), cwd));
  const open = timed(['node', '--expose-gc', '--input-type=module', '-e', OPEN_MEMORY], scratch);
  const [, ms, held] = /OPEN_MS (\S+) HELD_KIB (\S+)/.exec(open.stdout) ?? [];
  rows.memory.push({ ...open, ms: Number(ms), heldMiB: Number(held) / 1024 });
  rmSync(cwd, { recursive: true, force: true });
}
rmSync(scratch, { recursive: true, force: true });

const med = (samples, key) => median(samples.map((sample) => sample[key]));
const nodeMs = med(rows.node, 'ms');
const line = (label, samples, ratio = true) =>
  `| ${label} | ${samples.length} | ${(med(samples, 'ms') / 1000).toFixed(2)} s | ` +
  `${ratio ? `${(med(samples, 'ms') / nodeMs).toFixed(1)}×` : ''} | ${med(samples, 'rssMiB').toFixed(0)} MiB |`;
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
process.stdout.write(
  `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load ${load} at the end, medians of ${RUNS}\n\n` +
    `| measure | n | wall (median) | × \`node -e 0\` | peak RSS (median) |\n|---|---|---|---|---|\n` +
    `${line('`node -e 0`', rows.node)}\n` +
    `${line('`spool run examples/saga.sh`, empty data dir', rows.empty)}\n` +
    `${line('the same, data dir there', rows.there)}\n` +
    `${line('`openPgliteStore()` in memory (in-process time; RSS of its process)', rows.memory, false)}\n\n` +
    `Resident with that store open, after start-up and a full GC: ${med(rows.memory, 'heldMiB').toFixed(0)} MiB (median).\n`,
);
