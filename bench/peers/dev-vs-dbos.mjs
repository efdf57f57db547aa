#!/usr/bin/env node
/**
 * `spool dev` beside DBOS Transact, in one sitting, on one throwaway PostgreSQL (issue 32): N runs
 * of a 3-step workflow started at once, each side on its own database of the same server.
 *
 *   - Hyperspool: `spool dev --database-url`, N runs of a bash script of three `spool step NAME -- true`
 *     submitted at once over HTTP (what a person or a webhook does), timed from the first request to
 *     the last run's finished_at.
 *   - DBOS: one Python process, a `@DBOS.workflow()` of three `@DBOS.step()`s started N times with
 *     `DBOS.start_workflow` and every result awaited; twice: steps that return at once (DBOS's best
 *     case, no process), and steps that run `true` as a subprocess (the same work as ours).
 *   - The floor for a script that starts three commands: N × `bash -eu` running three Go
 *     hello-worlds (what three native `spool` clients cost at the least), 16 at a time; and the same
 *     with each hello-world followed by `/bin/true`, the steps' own commands.
 *
 * CPU per run is the whole tree's: the server or the Python process with every child it reaped (the
 * scripts, their clients, `true`), plus PostgreSQL's postmaster and backends, from /proc jiffies.
 * Each side warms up first, 300 runs by default (`--warmup N`): a server is measured warm, its code compiled
 * (after 30, V8 was still compiling `spool dev`: 6.8–8.5 ms of server CPU a run against 4.4–5.7 after 600).
 * Nothing is asserted; the figures go to stdout as markdown.
 *
 *   npm run bench:peers                      # builds first
 *   node bench/peers/dev-vs-dbos.mjs --runs 200
 *   node bench/peers/dev-vs-dbos.mjs --only-hyperspool --spool-root ../before   # one side, another build
 *
 * BENCH_SERVER_NODE_ARGS adds node flags to the server's process (`--cpu-prof --cpu-prof-dir=DIR`).
 * BENCH_DBOS_PYTHON=/path/to/python skips the virtualenv and uses that interpreter (it must import dbos).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { dbosPython } from '../lib/dbos.mjs';
import { TICK, familyJiffies, ownJiffies, postgresJiffies, postmasterOf, rssMiB, runCommand } from '../lib/proc.mjs';
import { loadTestPostgres } from '../lib/test-postgres.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const RUNS = arg('runs', 200);
// --spool-root DIR: the build of Hyperspool to run (another checkout's, to compare before and after).
const SPOOL_ROOT = process.argv.includes('--spool-root') ? resolve(process.argv[process.argv.indexOf('--spool-root') + 1]) : ROOT;
const WARMUP = arg('warmup', 300);
const FLOOR_PARALLEL = 16;
const started = Date.now();
const log = (line) => process.stderr.write(`[bench:peers ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const scratch = mkdtempSync(join(tmpdir(), 'spool-peers-'));
const load = { start: loadavg().map((n) => n.toFixed(2)).join(' ') };

const { startPostgres } = await loadTestPostgres(ROOT);
const postgres = await startPostgres();
const postmaster = postmasterOf(postgres.url, tmpdir());
const { python, version: dbosVersion } = await dbosPython(scratch, log);

/** CPU of `pids`' trees and PostgreSQL's from `from` to now: ms per run. */
const cpuSince = (from, pids, runs) => {
  const now = { tree: pids.reduce((s, p) => s + familyJiffies(p), 0), pg: postgresJiffies(postmaster) };
  const ms = (j) => (j * 1000) / TICK / runs;
  return { own: ms(now.tree - from.tree), postgres: ms(now.pg - from.pg), total: ms(now.tree - from.tree + now.pg - from.pg) };
};
const cpuNow = (pids) => ({ tree: pids.reduce((s, p) => s + familyJiffies(p), 0), pg: postgresJiffies(postmaster) });

// ---- Hyperspool: spool dev on PostgreSQL ----
async function hyperspool() {
  const url = await postgres.createDatabase('spool_peers');
  const dir = join(scratch, 'spool');
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  // BENCH_SERVER_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the server.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = spawn(process.execPath, [...nodeArgs, join(SPOOL_ROOT, 'bin', 'spool'), 'dev', '--port', String(port), '--data-dir', join(dir, 'data'), '--database-url', url], {
    cwd: scratch,
    env: { ...process.env, SPOOL_SERVER: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  try {
    for (let i = 0; !output.includes('listening'); i++) {
      if (i > 600 || server.exitCode !== null) throw new Error(`spool dev did not start:\n${output}`);
      await sleep(100);
    }
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const script = 'spool step a -- true\nspool step b -- true\nspool step c -- true\n';
    // The file is there, as when a person submits one (`spool submit three.sh`).
    writeFileSync(join(scratch, 'three.sh'), script);
    const submit = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'three.sh', interpreter: 'bash -eu', script, cwd: scratch }),
      });
      if (!response.ok) throw new Error(`POST /v1/runs: ${response.status} ${await response.text()}`);
      return (await response.json()).run.id;
    };
    // The bench's own queries (its polls) are transactions too: counted, to leave them out.
    let ownQueries = 0;
    const commits = async () => {
      ownQueries++;
      const { rows } = await db.query(`select xact_commit::int as n from pg_stat_database where datname = current_database()`);
      return rows[0].n;
    };
    const batch = async (n) => {
      const t0 = Date.now();
      const ids = await Promise.all(Array.from({ length: n }, submit));
      for (;;) {
        ownQueries++;
        const { rows } = await db.query(`select count(*) filter (where status = 'succeeded')::int as ok, count(*) filter (where status in ('failed', 'cancelled'))::int as bad, max(finished_at) as last from runs where id = any($1)`, [ids]);
        if (rows[0].bad > 0) throw new Error(`${rows[0].bad} runs failed:\n${output.slice(-2000)}`);
        if (rows[0].ok === n) return (new Date(rows[0].last).getTime() - t0) / 1000;
        await sleep(50);
      }
    };
    log(`Hyperspool: ${WARMUP} warm-up runs, then ${RUNS} at once`);
    await batch(WARMUP);
    const from = cpuNow([server.pid]);
    const serverFrom = ownJiffies(server.pid);
    const commitsFrom = await commits();
    const queriesFrom = ownQueries;
    const seconds = await batch(RUNS);
    const cpu = cpuSince(from, [server.pid], RUNS);
    cpu.server = ((ownJiffies(server.pid) - serverFrom) * 1000) / TICK / RUNS;
    const rss = rssMiB(server.pid);
    // pg_stat_database is sent by backends when idle, so wait for the count to settle.
    await sleep(1500);
    const transactions = ((await commits()) - commitsFrom - (ownQueries - queriesFrom)) / RUNS;
    await db.end();
    return { seconds, perSecond: RUNS / seconds, cpu, rss, transactions };
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode === null ? server.once('exit', r) : r()));
  }
}

// ---- DBOS: one Python process ----
const DBOS_SCRIPT = `import json, subprocess, sys, time
from dbos import DBOS

url, n, warmup, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
DBOS(config={"name": "peers-bench-" + kind, "system_database_url": url, "run_admin_server": False, "log_level": "WARNING"})


@DBOS.step()
def work(i):
    if kind == "command":
        subprocess.run(["true"], check=True)
    return i


@DBOS.workflow()
def three(i):
    work(i)
    work(i)
    work(i)
    return i


DBOS.launch()
for h in [DBOS.start_workflow(three, i) for i in range(warmup)]:
    h.get_result()
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter()
handles = [DBOS.start_workflow(three, i) for i in range(n)]
for h in handles:
    h.get_result()
print(json.dumps({"seconds": time.perf_counter() - t0}), flush=True)
DBOS.destroy()
`;

async function dbos(kind) {
  const url = (await postgres.createDatabase(`dbos_${kind}`)).replace(/^postgres:\/\//, 'postgresql://');
  const file = join(scratch, 'dbos_peers.py');
  writeFileSync(file, DBOS_SCRIPT);
  log(`DBOS (${kind} steps): ${WARMUP} warm-up workflows, then ${RUNS} at once`);
  const child = spawn(python, [file, url, String(RUNS), String(WARMUP), kind], { cwd: scratch, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  // One listener gathers stdout; each wait only looks at it (a listener per wait read every chunk twice).
  child.stdout.on('data', (chunk) => (output += chunk));
  const line = (match) =>
    new Promise((resolveLine, reject) => {
      const look = () => {
        const found = output.split('\n').find(match);
        if (found) {
          child.stdout.off('data', look);
          resolveLine(found);
        }
      };
      child.stdout.on('data', look);
      child.once('exit', (code) => reject(new Error(`DBOS exited ${code}:\n${errors.slice(-3000)}`)));
      look();
    });
  await line((l) => l === 'ready');
  const from = cpuNow([child.pid]);
  child.stdin.write('go\n');
  const { seconds } = JSON.parse(await line((l) => l.startsWith('{')));
  const cpu = cpuSince(from, [child.pid], RUNS);
  const rss = rssMiB(child.pid);
  await new Promise((r) => child.once('exit', r));
  return { seconds, perSecond: RUNS / seconds, cpu, rss };
}

// ---- the floor: bash + three Go hello-worlds ----
/**
 * N × `bash -eu` starting three Go hello-worlds (what three native clients cost at the least), 16 at
 * a time. With `commands`, each hello-world is followed by `/bin/true`, the step's own command that
 * a client starts: the least the same work costs with no server, no database and no round trip.
 */
async function floor(commands) {
  const dir = join(scratch, 'hello');
  rmSync(dir, { recursive: true, force: true });
  await runCommand('mkdir', ['-p', dir]);
  writeFileSync(join(dir, 'go.mod'), 'module hello\n\ngo 1.21\n');
  writeFileSync(join(dir, 'main.go'), 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n');
  await runCommand('go', ['build', '-o', 'hello', '.'], { cwd: dir, timeoutMs: 300_000 });
  const script = join(dir, 'three.sh');
  const line = `${join(dir, 'hello')} >/dev/null${commands ? '; /bin/true' : ''}\n`;
  writeFileSync(script, line.repeat(3));
  const once = () =>
    new Promise((resolveOnce, reject) => {
      const child = spawn('bash', ['-eu', script], { stdio: 'ignore' });
      child.once('exit', (code) => (code === 0 ? resolveOnce() : reject(new Error(`exit ${code}`))));
    });
  log(`floor: ${RUNS} × bash + 3 Go hello-worlds${commands ? ' and /bin/true' : ''}, ${FLOOR_PARALLEL} at a time`);
  const from = cpuNow([process.pid]);
  const ownBefore = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: FLOOR_PARALLEL }, async () => {
    while (next < RUNS) {
      next++;
      await once();
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(ownBefore);
  const cpu = cpuSince(from, [process.pid], RUNS);
  // This process's own CPU (spawning, waiting) is the bench's, not the floor's.
  const children = cpu.own - (own.user + own.system) / 1000 / RUNS;
  return { seconds, perSecond: RUNS / seconds, cpu: { own: children, postgres: 0, total: children } };
}

try {
  const hyperspoolResult = await hyperspool();
  if (process.argv.includes('--only-hyperspool')) {
    const r = hyperspoolResult;
    console.log(`hyperspool ${r.perSecond.toFixed(1)} runs/s; CPU ms per run ${r.cpu.total.toFixed(1)} (server ${r.cpu.server.toFixed(1)}, the rest of its tree ${(r.cpu.own - r.cpu.server).toFixed(1)}, PostgreSQL ${r.cpu.postgres.toFixed(1)}); ${r.transactions.toFixed(1)} PostgreSQL transactions a run`);
    process.exit(0);
  }
  const results = {
    hyperspool: hyperspoolResult,
    dbosTrivial: await dbos('trivial'),
    dbosCommand: await dbos('command'),
    floor: await floor(false),
    floorCommands: await floor(true),
  };
  load.end = loadavg().map((n) => n.toFixed(2)).join(' ');
  const row = (label, r) =>
    `| ${label} | ${r.perSecond.toFixed(1)} | ${r.seconds.toFixed(2)} | ${r.cpu.total.toFixed(1)} (${r.cpu.own.toFixed(1)} + PostgreSQL ${r.cpu.postgres.toFixed(1)}) | ${r.rss ? r.rss.toFixed(0) : '–'} |`;
  const h = results.hyperspool;
  const split = `Of Hyperspool's ${h.cpu.own.toFixed(1)} ms in its process tree, the server process itself spent ${h.cpu.server.toFixed(1)} ms a run and its scripts (bash, the clients, \`true\`) ${(h.cpu.own - h.cpu.server).toFixed(1)} ms.`;
  const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
  console.log(
    [
      `- date: ${new Date().toISOString()}; ${cpus().length} cores; load average (1/5/15 min) at start ${load.start}, at end ${load.end}`,
      `- DBOS ${dbosVersion.split(' ')[0]} on Python ${dbosVersion.split(' ')[1]}; ${RUNS} runs each, after ${WARMUP} warm-up runs; one PostgreSQL (test config: fsync off), a database per side`,
      '',
      '| 3-step workflow, N at once | runs/s | seconds | CPU ms per run (process tree + PostgreSQL) | RSS MiB after |',
      '| --- | --- | --- | --- | --- |',
      row('Hyperspool `spool dev`, bash + 3 × `spool step NAME -- true`', h),
      row('DBOS, 3 steps returning at once', results.dbosTrivial),
      row('DBOS, 3 steps each running `true`', results.dbosCommand),
      row(`floor: bash + 3 × Go hello-world, ${FLOOR_PARALLEL} at a time`, results.floor),
      row(`floor with the steps' commands: bash + 3 × (Go hello-world + \`/bin/true\`), ${FLOOR_PARALLEL} at a time`, results.floorCommands),
      '',
      split,
      '',
      `Hyperspool ÷ DBOS (runs/s): ${ratio(h.perSecond, results.dbosTrivial.perSecond)} of the trivial steps, ${ratio(h.perSecond, results.dbosCommand.perSecond)} of the command steps; ÷ the floor: ${ratio(h.perSecond, results.floor.perSecond)}, ÷ the floor with the commands: ${ratio(h.perSecond, results.floorCommands.perSecond)} (which is itself ${ratio(results.floorCommands.perSecond, results.floor.perSecond)} of the floor). CPU per run ÷ DBOS's: ${ratio(h.cpu.total, results.dbosTrivial.cpu.total)} (trivial), ${ratio(h.cpu.total, results.dbosCommand.cpu.total)} (command).`,
    ].join('\n'),
  );
} finally {
  await postgres.stop();
  rmSync(scratch, { recursive: true, force: true });
}
