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
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
function timed(argv, cwd, env = process.env) {
  const start = process.hrtime.bigint();
  const result = spawnSync(TIME, ['-f', 'PEAK_RSS_KIB %M', ...argv], { cwd, env, encoding: 'utf8' });
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

/**
 * The floor of a run with its data dir there, in two parts no change of ours can shorten: a Node
 * process that opens that data dir in PGlite, asks `select 1` and closes it, nothing of ours loaded
 * (WebAssembly compiled by Liftoff alone, as the embedded store has it: src/store/pglite.ts);
 * and saga.sh itself with a stand-in for `spool` on PATH, a static Go program that runs the command
 * after `--` and passes its stdout and exit code on (a process per call, as the design has, without
 * the journal).
 */
const OPEN_THERE = join(TREE, 'open-there.mjs');
writeFileSync(
  OPEN_THERE,
  `import { PGlite } from '@electric-sql/pglite';\nconst db = await PGlite.create({ dataDir: process.argv[2] });\nawait db.query('select 1');\nawait db.close();\n`,
);
const STAND_IN = join(scratch, 'stand-in');
mkdirSync(STAND_IN);
writeFileSync(join(STAND_IN, 'go.mod'), 'module spool\n\ngo 1.24\n');
writeFileSync(
  join(STAND_IN, 'main.go'),
  `package main

import (
\t"os"
\t"os/exec"
\t"slices"
)

func main() {
\tat := slices.Index(os.Args, "--")
\tcmd := exec.Command(os.Args[at+1], os.Args[at+2:]...)
\tcmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
\tif err := cmd.Run(); err != nil {
\t\tos.Exit(1)
\t}
}
`,
);
execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', 'spool', '.'], { cwd: STAND_IN, env: { ...process.env, CGO_ENABLED: '0' } });

const rows = { node: [], empty: [], there: [], memory: [], pglite: [], script: [] };
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
  rows.pglite.push(timed(['node', '--liftoff-only', OPEN_THERE, join(cwd, '.spool', 'pgdata')], TREE));
  const script = timed(['bash', join(TREE, 'examples/saga.sh')], cwd, { ...process.env, PATH: `${STAND_IN}:${process.env.PATH}` });
  if (!script.stdout.includes('cancelled FL-881')) throw new Error(`saga.sh with the stand-in did not roll back:\n${script.stdout}${script.stderr}`);
  rows.script.push(script);
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
    `${line('`openPgliteStore()` in memory (in-process time; RSS of its process)', rows.memory, false)}\n` +
    `${line('floor, part 1: `node` opening that data dir in PGlite, `select 1`, closing it', rows.pglite)}\n` +
    `${line('floor, part 2: saga.sh with a Go stand-in for `spool` (runs the command, no journal)', rows.script)}\n\n` +
    `The floor of a run with its data dir there, the two parts in sequence: ${((med(rows.pglite, 'ms') + med(rows.script, 'ms')) / nodeMs).toFixed(1)}× \`node -e 0\`.\n` +
    `Resident with that store open, after start-up and a full GC: ${med(rows.memory, 'heldMiB').toFixed(0)} MiB (median).\n`,
);
