#!/usr/bin/env node
/**
 * What an in-process `step_fn` costs a script written with the Python and the TypeScript SDK on
 * PostgreSQL, fresh (pass 1) and replayed (pass 2), beside DBOS Transact (Python, `@DBOS.step()`)
 * doing the same work on the same PostgreSQL server; and what one journal write costs the agent,
 * timed separately, so the doc can say what a fresh call spends its time on.
 *
 *   npm run bench:sdk                    # builds first; rewrites its section of docs/benchmarks.md
 *   node bench/sdk-step-fn.mjs --no-write
 *
 * BENCH_SDK_STEPS (default 200) calls per script. DBOS is pip-installed into a virtualenv in the
 * bench's scratch directory (BENCH_DBOS_PYTHON=/path/to/python skips the install and uses that
 * interpreter, which must import `dbos`). Every call is timed inside the script that makes it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './lib/stats.mjs';
import { loadTestPostgres } from './lib/test-postgres.mjs';
import { dbosPython } from './lib/dbos.mjs';
import { runCommand } from './lib/proc.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const BEGIN = '<!-- sdk-bench:begin -->';
const END = '<!-- sdk-bench:end -->';
const STEPS = Math.min(Number.parseInt(process.env.BENCH_SDK_STEPS ?? '', 10) || 200, 5000);
const RUN_TIMEOUT_MS = 10 * 60_000;
const SPOOL = join(ROOT, 'bin', 'spool');
const WRITE_DOC = !process.argv.includes('--no-write');
const scratch = mkdtempSync(join(tmpdir(), 'spool-sdk-bench-'));
const started = Date.now();
const log = (line) =>
  process.stderr.write(`[bench:sdk ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);
const require = createRequire(join(ROOT, 'package.json'));
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}
const fmt = (ms) =>
  !Number.isFinite(ms) ? 'n/a' : ms < 0.1 ? `${(ms * 1000).toFixed(0)} µs` : ms < 10 ? ms.toFixed(2) : ms.toFixed(1);
const ms = (value) => (fmt(value).endsWith('µs') || !Number.isFinite(value) ? fmt(value) : `${fmt(value)} ms`);
const times = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');

/** Runs a command to its end (or kills it at the timeout); rejects on a non-zero exit. */
const run = (file, args, { env = process.env, timeoutMs = RUN_TIMEOUT_MS, cwd = scratch } = {}) => runCommand(file, args, { env, timeoutMs, cwd });

/** `{ ns: number[], ran: number }` written by a script: ms samples and how often the function body ran. */
function readSamples(file) {
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  return { ms: parsed.ns.map((ns) => Number(ns) / 1e6), ran: parsed.ran };
}

// ---------------------------------------------------------------------------------------------
// the scripts

/** A Python workflow: N step_fn calls, each timed, samples to OUT.<pass>, then a 1 ms durable sleep. */
function pythonScript(out, steps) {
  return `import json, os, time
from hyperspool import script

ran = 0


def trivial(i):
    global ran
    ran += 1
    return {"i": i, "ok": True}


ns = []
for i in range(${steps}):
    t0 = time.perf_counter_ns()
    script.step_fn(f"f{i}", lambda: trivial(i))
    ns.append(time.perf_counter_ns() - t0)
with open(${JSON.stringify(out)} + "." + os.environ["SPOOL_PASS"], "w") as f:
    json.dump({"ns": ns, "ran": ran}, f)
script.sleep(0.001)
`;
}

function typescriptScript(out, steps) {
  return `import { writeFileSync } from 'node:fs';
import { sleep, stepFn } from '@hyperspool/sdk';

let ran = 0;
function trivial(i) {
  ran += 1;
  return { i, ok: true };
}

const ns = [];
for (let i = 0; i < ${steps}; i++) {
  const t0 = process.hrtime.bigint();
  await stepFn(\`f\${i}\`, () => trivial(i));
  ns.push(Number(process.hrtime.bigint() - t0));
}
writeFileSync(${JSON.stringify(out)} + '.' + process.env.SPOOL_PASS, JSON.stringify({ ns, ran }));
await sleep(1);
`;
}

/**
 * DBOS: a workflow calling a step N times, each call timed inside the workflow. Phase "fresh"
 * starts it under a fixed workflow id and, once every step is recorded, ends the process with
 * os._exit before the workflow can finish (a crash); phase "replayed" launches DBOS again, whose
 * start-up recovery re-runs the pending workflow from the top, each step answered from its
 * recorded output.
 */
function dbosScript() {
  return `import json, os, sys, time
from dbos import DBOS, DBOSConfig, SetWorkflowID

url, out, steps, phase = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
config: DBOSConfig = {
    "name": "sdk-bench",
    "system_database_url": url,
    "run_admin_server": False,
    "log_level": "WARNING",
}
DBOS(config=config)
ran = 0


@DBOS.step()
def trivial(i):
    global ran
    ran += 1
    return {"i": i, "ok": True}


@DBOS.workflow()
def bench():
    ns = []
    for i in range(steps):
        t0 = time.perf_counter_ns()
        trivial(i)
        ns.append(time.perf_counter_ns() - t0)
    with open(out + "." + phase, "w") as f:
        json.dump({"ns": ns, "ran": ran}, f)
    if phase == "fresh":
        os._exit(0)
    return len(ns)


DBOS.launch()
if phase == "fresh":
    with SetWorkflowID("sdk-bench-workflow"):
        bench()
    sys.exit("the workflow returned: the fresh phase should have ended the process")
else:
    DBOS.retrieve_workflow("sdk-bench-workflow").get_result()
    DBOS.destroy()
`;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL helpers

let pgModule = null;
async function pgQuery(url, sql, params = []) {
  pgModule ??= (await import(pathToFileURL(require.resolve('pg')).href)).default;
  const client = new pgModule.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** A database's committed transactions and inserted rows so far (read from the `postgres` database). */
async function dbStats(adminUrl, database) {
  await new Promise((resolveWait) => setTimeout(resolveWait, 700)); // an exiting backend's last stats
  const [row] = await pgQuery(
    adminUrl,
    'select xact_commit, tup_inserted, tup_updated from pg_stat_database where datname = $1',
    [database],
  );
  return {
    commits: Number(row?.xact_commit ?? 0),
    inserted: Number(row?.tup_inserted ?? 0),
    updated: Number(row?.tup_updated ?? 0),
  };
}
const statsDelta = (before, after) => ({
  commits: after.commits - before.commits,
  inserted: after.inserted - before.inserted,
  updated: after.updated - before.updated,
});

// ---------------------------------------------------------------------------------------------
// the measurements

/** One `spool run` of a script in its own database: samples of both passes and the database's activity. */
async function hyperspool(server, adminUrl, name, ext, source, steps) {
  const database = `hs_${name}`;
  const url = await server.createDatabase(database);
  const out = join(scratch, `${name}.samples`);
  const file = join(scratch, `${name}.${ext}`);
  writeFileSync(file, source(out, steps));
  const before = await dbStats(adminUrl, database);
  const t0 = Date.now();
  await run(process.execPath, [SPOOL, 'run', file, '--database-url', url]);
  const wallMs = Date.now() - t0;
  const stats = statsDelta(before, await dbStats(adminUrl, database));
  return { fresh: readSamples(`${out}.1`), replayed: readSamples(`${out}.2`), stats, wallMs };
}

/** What a fresh step_fn makes the agent write: a `call` then a `result` entry, timed one by one. */
async function journalWrites(server, writes) {
  const url = await server.createDatabase('hs_journal');
  const { openPostgresStore } = await import(pathToFileURL(join(ROOT, 'dist', 'store', 'postgres.js')).href);
  const store = await openPostgresStore(url);
  try {
    const runId = `bench-sdk-${Date.now()}`;
    await store.createRun({ id: runId, project: 'bench', workflow: 'bench', interpreter: 'python', script: '' });
    const entry = (position, kind) => ({
      runId,
      position,
      kind,
      verb: 'step_fn',
      name: `f${position}`,
      occurrence: 0,
      data: kind === 'call' ? {} : { json: JSON.stringify({ i: position, ok: true }) },
    });
    const warmup = 20;
    const single = [];
    const pairs = [];
    for (let i = 0; i < warmup + writes; i++) {
      // One entry alone (as a call entry a long step writes), then a fresh step_fn's one write: its
      // call and its result in one statement (appendJournalEntries), at the next position.
      const t0 = process.hrtime.bigint();
      await store.appendJournal(entry(2 * i, 'call'));
      if (i >= warmup) single.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const pairStart = process.hrtime.bigint();
      await store.appendJournalEntries([entry(2 * i + 1, 'call'), entry(2 * i + 1, 'result')]);
      if (i >= warmup) pairs.push(Number(process.hrtime.bigint() - pairStart) / 1e6);
    }
    return { single, pairs };
  } finally {
    await store.close();
  }
}


/** DBOS fresh (one process, crashed at the end) and replayed (a second process, recovery). */
async function dbos(server, adminUrl, python, steps, database) {
  const url = (await server.createDatabase(database)).replace(/^postgres:\/\//, 'postgresql://');
  const file = join(scratch, 'dbos_bench.py');
  writeFileSync(file, dbosScript());
  const out = join(scratch, `${database}.samples`);
  const result = {};
  for (const phase of ['fresh', 'replayed']) {
    log(`DBOS: ${phase}, ${steps} steps`);
    const before = await dbStats(adminUrl, database);
    const t0 = Date.now();
    await run(python, [file, url, out, String(steps), phase]);
    result[`${phase}WallMs`] = Date.now() - t0;
    result[phase] = readSamples(`${out}.${phase}`);
    result[`${phase}Stats`] = statsDelta(before, await dbStats(adminUrl, database));
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// report

function section(report) {
  const { hsPy, hsTs, hsPyBase, hsTsBase, dbosResult, dbosBase, journal, dbosNote, loadStart, loadEnd, versions } =
    report;
  const rows = [];
  const add = (label, samples) =>
    rows.push({
      label,
      n: samples?.length ?? 0,
      median: samples ? median(samples) : Number.NaN,
      p90: samples ? quantile(samples, 0.9) : Number.NaN,
    });
  add('Hyperspool Python `script.step_fn`, fresh (pass 1)', hsPy?.fresh.ms);
  add('Hyperspool Python `script.step_fn`, replayed (pass 2)', hsPy?.replayed.ms);
  add('Hyperspool TypeScript `await stepFn`, fresh (pass 1)', hsTs?.fresh.ms);
  add('Hyperspool TypeScript `await stepFn`, replayed (pass 2)', hsTs?.replayed.ms);
  add('DBOS Python `@DBOS.step()`, fresh', dbosResult?.fresh.ms);
  add('DBOS Python `@DBOS.step()`, replayed (recovery after a crash)', dbosResult?.replayed.ms);
  add('agent journal write, one `appendJournal` (in-process, same server)', journal?.single);
  add('agent journal write of a fresh step_fn: `call` and `result` in one statement', journal?.pairs);
  const m = (i) => rows[i].median;
  const table = [
    '| measurement | n | median ms | p90 ms |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.label} | ${r.n} | ${fmt(r.median)} | ${fmt(r.p90)} |`),
  ];
  const ratios = [
    '| Hyperspool ÷ DBOS (medians) | fresh | replayed |',
    '| --- | --- | --- |',
    `| Python SDK ÷ DBOS Python | ${times(m(0), m(4))} | ${times(m(1), m(5))} |`,
    `| TypeScript SDK ÷ DBOS Python | ${times(m(2), m(4))} | ${times(m(3), m(5))} |`,
  ];
  const perStep = (stats, base) =>
    stats && base
      ? `${((stats.commits - base.commits) / STEPS).toFixed(2)} commits, ${((stats.inserted - base.inserted) / STEPS).toFixed(2)} inserted and ` +
        `${((stats.updated - base.updated) / STEPS).toFixed(2)} updated rows per step`
      : 'n/a';
  const dbosCommits = (key) =>
    dbosResult && dbosBase ? ((dbosResult[key].commits - dbosBase[key].commits) / STEPS).toFixed(1) : 'n/a';
  const goal = (label, fresh, replayed) =>
    `${label}: fresh ${ms(fresh)} (goal ≤ 2 ms: ${fresh <= 2 ? '**met**' : '**not met**'}), replayed ${ms(replayed)} (goal ≤ 1 ms: ${replayed <= 1 ? '**met**' : '**not met**'})`;
  const shareOf = (fresh) =>
    journal && Number.isFinite(fresh) ? `${((median(journal.pairs) / fresh) * 100).toFixed(0)}%` : 'n/a';
  const freshMinusReplay = (fresh, replayed) => fresh - 2 * replayed;
  const lines = [
    BEGIN,
    '## In-process `step_fn` (Python and TypeScript SDKs) beside DBOS Transact, on PostgreSQL',
    '',
    `\`npm run bench:sdk\` (\`bench/sdk-step-fn.mjs\`), ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, ${cpus().length} cores ` +
      `(${cpus()[0]?.model ?? 'unknown CPU'}), load average (1/5/15 min) ${loadStart} at the start and ${loadEnd} at the end ` +
      `(a test suite may have been running beside it: read the figures as orders of magnitude and ratios). ` +
      `N = ${STEPS} calls per script; ${versions}.`,
    '',
    '**Method.** One throwaway PostgreSQL server (`test/support/postgres.ts`: fsync, synchronous_commit and ' +
      'full_page_writes off, the same for every row), a separate database per script. `node bin/spool run FILE ' +
      '--database-url URL` runs a Python script and a TypeScript (`.mjs`) script that each call `step_fn`/`stepFn` N times ' +
      'with a new name and a trivial function (returns `{"i": i, "ok": true}`), timing each call in-process ' +
      '(`time.perf_counter_ns`, `process.hrtime.bigint`) and writing the samples to a file per `SPOOL_PASS`, then sleep ' +
      '1 ms durably: pass 1 records every call (fresh), pass 2 re-runs the script from the top and every call is answered ' +
      'from the journal (replayed). DBOS Transact (Python `dbos` from PyPI, in a virtualenv; system database on the same ' +
      'server) runs a `@DBOS.workflow()` that calls a `@DBOS.step()` N times, timed the same way inside the workflow; the ' +
      'fresh process ends itself with `os._exit` once every step is recorded (a crash before the workflow completes), and a ' +
      'second process launches DBOS, whose start-up recovery re-runs the pending workflow under the same id, each step ' +
      'answered from its recorded output (replayed). The agent journal rows time, in one Node process on another ' +
      'database of the same server, `store.appendJournal` of one entry and `store.appendJournalEntries` of a `call` ' +
      'and a `result` entry, as a fresh step_fn writes them (20 of each untimed first). All numbers are medians (and ' +
      'p90) of one run.',
    '',
    ...table,
    '',
    ...ratios,
    '',
    `Sanity checks: the function body ran ${hsPy?.fresh.ran ?? 'n/a'}/${hsPy?.replayed.ran ?? 'n/a'} (Python, pass 1/2), ` +
      `${hsTs?.fresh.ran ?? 'n/a'}/${hsTs?.replayed.ran ?? 'n/a'} (TypeScript) and ${dbosResult?.fresh.ran ?? 'n/a'}/` +
      `${dbosResult?.replayed.ran ?? 'n/a'} (DBOS, fresh/replayed) times, so every replayed call was answered from a record. ` +
      'Database activity per step, from `pg_stat_database` of each database (the same script with 0 steps run in ' +
      "another database and subtracted, which removes start-up, migrations and run bookkeeping; the agent's own timers " +
      'and leases can still add a little): ' +
      `Hyperspool Python run (both passes) ${perStep(hsPy?.stats, hsPyBase?.stats)}, TypeScript run ${perStep(hsTs?.stats, hsTsBase?.stats)}; ` +
      `DBOS fresh ${perStep(dbosResult?.freshStats, dbosBase?.freshStats)}, replayed ${perStep(dbosResult?.replayedStats, dbosBase?.replayedStats)}.`,
    '',
    '**What each number includes.** A Hyperspool call is a request over the unix socket (`$SPOOL_SOCKET`) to the ' +
      'agent, which lives in the `spool run` process, not in the script. Fresh, it is two round trips (`step_fn` → ' +
      '`execute`, run the function, `done {value}` → `ok`) and one journal write by the agent: the `call` and the ' +
      '`result` entry in one INSERT, committed before it answers `ok` (a function still running after 250 ms has its ' +
      '`call` entry written on its own, so it shows as running). Replayed, it is one round trip: the agent answers ' +
      'from the journal it read when the pass began, with no database access. A DBOS ' +
      "step runs in the workflow's own process, with no socket: fresh, DBOS looks in PostgreSQL for a recorded output of " +
      'the step, runs it and commits its output (one INSERT into `operation_outputs`), which the counts above show as ' +
      `${dbosCommits('freshStats')} transactions per step; replayed, it only reads the recorded output ` +
      `(${dbosCommits('replayedStats')} transactions per step, nothing inserted). Neither side pays a process start per call, and ` +
      'both write to the same PostgreSQL server with the same settings, which are not durable (fsync off): on a ' +
      'production server each committed write also waits for a WAL flush, one per fresh Hyperspool call, one per ' +
      'fresh DBOS step (its other transactions insert and update nothing); that cost is ' +
      'not in these rows (the durable `appendJournal` row of the main table above measures one such write).',
    '',
    `**Where a fresh Hyperspool call goes.** The journal write, timed alone, takes ${ms(journal ? median(journal.pairs) : Number.NaN)} ` +
      `(median), which is ${shareOf(m(0))} of a fresh Python call and ${shareOf(m(2))} of a fresh TypeScript call; ` +
      `a fresh call minus two replayed round trips leaves ${ms(freshMinusReplay(m(0), m(1)))} (Python) and ` +
      `${ms(freshMinusReplay(m(2), m(3)))} (TypeScript) for the agent's work on a new call, of which the journal write ` +
      `is the measured part. ${
        journal && Number.isFinite(m(0)) && median(journal.pairs) > m(0) / 2
          ? 'The journal write dominates a fresh call.'
          : "The journal write is not the larger part of a fresh call; the round trips (the SDK, the socket and the agent's request handling) are."
      } A replayed call is the floor of one round trip through the SDK, the socket and the agent.`,
    '',
    `**Goal** (from the issue: a Hyperspool step_fn ≤ 2 ms fresh, ≤ 1 ms replayed, medians): ${goal('Python', m(0), m(1))}; ` +
      `${goal('TypeScript', m(2), m(3))}.`,
    ...(dbosNote ? ['', `**DBOS:** ${dbosNote}`] : []),
    '',
    END,
  ];
  return lines.join('\n');
}

/** Replaces this bench's marked section of the doc as it is now (other benches own other sections), or appends it. */
function writeSection(text) {
  const current = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const begin = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    begin >= 0 && end > begin
      ? current.slice(0, begin) + text + current.slice(end + END.length)
      : `${current.trimEnd()}\n\n${text}\n`;
  writeFileSync(DOC, next);
}

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'store', 'postgres.js'))) throw new Error('no dist/: run npm run build first');
  const loadStart = loadavg();
  const { startPostgres } = await loadTestPostgres(ROOT);
  log('starting a throwaway PostgreSQL server');
  const server = await startPostgres();
  const adminUrl = server.url.replace(/\/[^/]*$/, '/postgres');
  const report = { loadStart };
  const versionParts = [`Node ${process.version}`];
  try {
    const [pgVersion] = await pgQuery(adminUrl, 'show server_version');
    versionParts.push(`PostgreSQL ${pgVersion.server_version}`);
    for (const steps of [STEPS, 0]) {
      const key = steps ? '' : 'Base';
      log(`Hyperspool Python: spool run, ${steps} step_fn calls`);
      report[`hsPy${key}`] = await hyperspool(server, adminUrl, `py${steps}`, 'py', pythonScript, steps);
      log(`Hyperspool TypeScript: spool run, ${steps} stepFn calls`);
      report[`hsTs${key}`] = await hyperspool(server, adminUrl, `ts${steps}`, 'mjs', typescriptScript, steps);
    }
    log('agent journal writes, in-process');
    report.journal = await journalWrites(server, STEPS);
    try {
      const { python, version } = await dbosPython(scratch, log);
      versionParts.push(`dbos ${version.split(' ')[0]} on Python ${version.split(' ')[1]}`);
      report.dbosResult = await dbos(server, adminUrl, python, STEPS, 'dbos_bench');
      report.dbosBase = await dbos(server, adminUrl, python, 0, 'dbos_base');
    } catch (error) {
      const reason = String(error?.message ?? error)
        .split('\n')
        .slice(0, 3)
        .join(' ')
        .slice(0, 400);
      report.dbosNote = `DBOS Transact could not be installed or run here, so its rows are n/a: ${reason}`;
      log(report.dbosNote);
    }
  } finally {
    await server.stop();
  }
  report.loadEnd = loadavg();
  report.versions = versionParts.join(', ');
  const text = section(report);
  process.stdout.write(`${text}\n`);
  if (WRITE_DOC) {
    writeSection(text);
    log(`wrote its section of ${DOC}`);
  }
}

try {
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
