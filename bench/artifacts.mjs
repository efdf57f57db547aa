#!/usr/bin/env node
/**
 * An artifact's put and get under `spool run` on the embedded store (PGlite): a bash workflow puts a
 * file of random bytes, sleeps (so a new pass gets it back), gets it and checks its sha256; the
 * script times its own put and get, so the figures leave out the store's open and the passes' start.
 *
 *   npm run build && node bench/artifacts.mjs                    # prints a Markdown table
 *   node bench/artifacts.mjs --mib 50 --runs 3 --spool-root ../before   # another build, to compare
 *
 * Each sample is a new data directory. Medians of --runs samples (default 3).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib/stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const option = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const MIB = Number(option('--mib', '50'));
const RUNS = Number(option('--runs', '3'));
const SPOOL_ROOT = resolve(option('--spool-root', ROOT));

// Nanoseconds around each call: pass 1's put (pass 2 replays it) and pass 2's get.
const WORKFLOW = `set -euo pipefail
now() { date +%s%N; }
if [ "$SPOOL_PASS" = 1 ]; then head -c ${MIB * 1024 * 1024} /dev/urandom > data.bin; fi
want=$(spool step sha -- sh -c "sha256sum data.bin | cut -d' ' -f1")
t0=$(now); spool artifact put data.bin data.bin; t1=$(now)
if [ "$SPOOL_PASS" = 1 ]; then echo "PUT $t0 $t1"; fi
spool sleep 1ms
t2=$(now); spool artifact get data.bin got.bin; t3=$(now)
[ "$(sha256sum got.bin | cut -d' ' -f1)" = "$want" ] || { echo "sha256 differs" >&2; exit 1; }
echo "GET $t2 $t3"
`;

const samples = { put: [], get: [] };
for (let run = 0; run < RUNS; run += 1) {
  const dir = mkdtempSync(join(tmpdir(), 'spool-bench-artifacts-'));
  try {
    writeFileSync(join(dir, 'put-get.sh'), WORKFLOW);
    const result = spawnSync('node', [join(SPOOL_ROOT, 'bin/spool'), 'run', 'put-get.sh', '--data-dir', 'data'], { cwd: dir, encoding: 'utf8' });
    const put = /PUT (\d+) (\d+)/.exec(result.stdout);
    const get = /GET (\d+) (\d+)/.exec(result.stdout);
    if (result.status !== 0 || !put || !get) throw new Error(`the workflow failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
    const ms = ([, start, end]) => Number(BigInt(end) - BigInt(start)) / 1e6;
    samples.put.push(ms(put));
    samples.get.push(ms(get));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const row = (verb, ms) => `| ${verb} ${MIB} MiB | ${(median(ms) / 1000).toFixed(2)} s | ${((MIB * 1048576) / (median(ms) / 1000) / 1e6).toFixed(1)} MB/s |`;
console.log(`Artifacts on the embedded store (${SPOOL_ROOT === ROOT ? 'this build' : SPOOL_ROOT}), median of ${RUNS}:\n`);
console.log('| call | time | rate |\n|---|---|---|');
console.log(row('`spool artifact put`', samples.put));
console.log(row('`spool artifact get`', samples.get));
