#!/usr/bin/env node
/**
 * A million sleeping runs in one PostgreSQL (issue 36, item 3). Grows a store to each size in turn
 * (1,000, 10,000, 100,000, 1,000,000 runs, up to --runs) and at each measures:
 *
 *   - wake-up latency: PROBES runs whose timers come due 25 ms apart; the time from each one's
 *     wake_at to the real Executor (dist/passes/executor.js) handing its pass to where passes run
 *     (its `runPass`, here a function that notes the time and sleeps the run again for 30 days:
 *     the pod or process start that follows on a cluster is measured elsewhere, bench:cluster);
 *   - bytes per sleeping run: pg_total_relation_size (heap, TOAST, indexes) of runs, journal and
 *     run_logs, over the runs, and the same for the runs added since the size before (the
 *     marginal cost, without the fixed cost of empty tables);
 *   - each hot query's time as the engine calls it (the store's own method, one round trip
 *     included): median and slowest of REPS calls.
 *
 * Every run is a workflow that ran one step and went to sleep for 30 days: a run with its pass's
 * journal (the step's call and result, the sleep's call) and one log line. SAMPLE runs (and the
 * probes) are made through the store's own API as a pass makes them (createRun, startPass,
 * appendJournalEntries, appendJournal, appendLog, then the engine's settleRun); the mass is copied
 * from one of those in bulk SQL, every column of its rows as the store wrote them, only the id,
 * project, times and the sleep's `until` changed. Mass ids have the shape and length of real ones
 * (`k8s:pN:run-` and 16 characters, in no order), in 50 projects.
 *
 *   npm run bench:million                                   # build first; prints a markdown section
 *   node bench/million-sleepers.mjs --runs 100000 [--probes 200] [--reps 20]
 *   node bench/million-sleepers.mjs --database-url postgres://… # an empty database of your own
 *   node bench/million-sleepers.mjs --partitions 16         # the journal hash-partitioned first
 *                                                           # (hack/partition-journal.sql)
 *
 * Without --database-url the server is a throwaway one like the tests' (test/support/postgres.ts:
 * fsync off, default memory settings). Nothing here is asserted: test/store/hot-queries.test.ts
 * checks the plans in CI.
 */
import { readFileSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { number, option } from './lib/args.mjs';
import { median, percentile } from './lib/stats.mjs';
import { loadTestPostgres } from './lib/test-postgres.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(pathToFileURL(join(ROOT, 'dist', path)).href);
const RUNS = number('runs', 1_000_000);
const PROBES = number('probes', 200);
const REPS = number('reps', 20);
const SAMPLE = number('sample', 100);
const PARTITIONS = number('partitions', 0);
const BATCH = 50_000;
const SIZES = [...new Set([1_000, 10_000, 100_000, 1_000_000].filter((size) => size < RUNS).concat(RUNS))].filter((size) => size > SAMPLE);
const DAY = 86_400_000;
const PROBE_SPACING_MS = 25;

const started = Date.now();
const log = (line) => process.stderr.write(`[bench:million ${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}\n`);

const { openPostgresStore } = await dist('store/postgres.js');
const { Executor } = await dist('passes/executor.js');
const { settleRun } = await dist('engine/settle.js');
const { newRunId } = await dist('common/ids.js');

let postgres = null;
let url = option('database-url');
if (!url) {
  const { startPostgres } = await loadTestPostgres(ROOT);
  postgres = await startPostgres();
  url = postgres.url;
}
const store = await openPostgresStore(url);
const db = new pg.Client({ connectionString: url });
await db.connect();
const count = async (table) => Number((await db.query(`select count(*) as n from ${table}`)).rows[0].n);
if ((await count('runs')) > 0) throw new Error('the database holds runs already: give the bench an empty one');
if (PARTITIONS > 0) {
  await db.query(`set spool.journal_partitions = ${PARTITIONS}`);
  await db.query(readFileSync(join(ROOT, 'hack', 'partition-journal.sql'), 'utf8'));
}
const serverVersion = (await db.query('show server_version')).rows[0].server_version;

const SCRIPT = `#!/bin/bash
# Charge an order, then remind the customer in 30 days.
set -eu
order=$(spool step fetch-order -- curl -fsS "https://shop.example/api/orders/$ORDER_ID")
echo "fetched order $(jq -r .id <<<"$order")"
spool sleep 30d
spool step remind -- curl -fsS -X POST "https://mail.example/send" -d "$order"
`;
const ORDER = `${JSON.stringify({ id: 'ord_4242', customer: 'cus_77', total: 129.5, currency: 'EUR', status: 'paid' })}\n`;

/** One pass of the workflow above, as the engine writes it: the step ran, the run sleeps until `wakeAt`. */
async function sleepingRun(project, wakeAt) {
  const { run } = await store.createRun({ id: newRunId('k8s', project), project, workflow: 'remind.sh', interpreter: 'bash', script: SCRIPT, input: { orderId: 'ord_4242' } });
  const passing = await store.startPass(run.id);
  const at = (position, kind, verb, name, data) => ({ runId: run.id, position, kind, verb, name, occurrence: 0, data });
  await store.appendJournalEntries([at(0, 'call', 'step', 'fetch-order', {}), at(0, 'result', 'step', 'fetch-order', { stdout: ORDER, exitCode: 0 })]);
  const until = wakeAt.toISOString();
  await store.appendJournal(at(1, 'call', 'sleep', '', { until }));
  await store.appendLog(run.id, 1, 'fetched order ord_4242\n');
  await settleRun(store, passing, { kind: 'suspended', suspension: { awaiting: `timer ${until}`, wait: { kind: 'timer', until }, wakeAt } }, new Date());
  return run.id;
}

log(`PostgreSQL ${serverVersion}; making ${SAMPLE} sample runs through the store`);
let template = '';
for (let i = 0; i < SAMPLE; i++) template = await sleepingRun(`p${i % 50}`, new Date(Date.now() + 30 * DAY + i * 1000));

/** Copies the template's rows for runs number [from, to): ids in no order, wake times 30 days on. */
async function copyTemplate(from, to) {
  const runs = `select i, 'p' || (i % 50) as project, 'k8s:p' || (i % 50) || ':run-' || substr(md5(i::text), 1, 16) as id,
                       now() + interval '30 days' + i * interval '1 second' as wake_at
                  from generate_series($2::int, $3::int - 1) as i`;
  const until = `to_char(n.wake_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  await db.query('begin');
  await db.query(
    `insert into runs select (jsonb_populate_record(null::runs, to_jsonb(t) || jsonb_build_object(
       'id', n.id, 'project', n.project, 'wake_at', n.wake_at, 'awaiting', 'timer ' || ${until},
       'wait', jsonb_build_object('kind', 'timer', 'until', ${until}),
       'created_at', t.created_at + n.i * interval '1 millisecond', 'updated_at', t.updated_at + n.i * interval '1 millisecond'))).*
       from runs t, (${runs}) n where t.id = $1`,
    [template, from, to],
  );
  await db.query(
    `insert into journal select (jsonb_populate_record(null::journal, to_jsonb(j) || jsonb_build_object(
       'run_id', n.id, 'recorded_at', j.recorded_at + n.i * interval '1 millisecond',
       'data', case when j.verb = 'sleep' then jsonb_build_object('until', ${until}) else j.data end))).*
       from journal j, (${runs}) n where j.run_id = $1`,
    [template, from, to],
  );
  await db.query(
    `insert into run_logs (run_id, pass, text, raw, logged_at)
     select n.id, l.pass, l.text, l.raw, l.logged_at + n.i * interval '1 millisecond' from run_logs l, (${runs}) n where l.run_id = $1`,
    [template, from, to],
  );
  await db.query('commit');
}

/** Heap, TOAST and indexes; a partitioned table holds nothing itself: its size is its partitions'. */
const sizeOf = async (table) =>
  Number(
    (
      await db.query(
        `select coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree($1::regclass) where isleaf),
                         pg_total_relation_size($1::regclass)) as bytes`,
        [table],
      )
    ).rows[0].bytes,
  );

async function timeCalls(name, call) {
  const times = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return { name, median: median(times), max: Math.max(...times) };
}

/** The hot queries, each as the engine calls it. */
async function hotQueries(someRun) {
  const now = new Date();
  const project = someRun.split(':')[1];
  // What a sweep asks a second after the last one: the changes since 5 s (its overlap) before that read.
  const since = new Date((await store.listUnfinishedRunStates(`k8s:${project}:`)).readAt.getTime() - 6_000);
  log(`the sweep every second reads ${(await store.listRunStatesChangedSince('k8s:', since)).states.length} runs changed in the last 6 s`);
  const calls = [
    ['listDueRuns (executor, every tick)', () => store.listDueRuns(now, 16)],
    ['nextDueAt (executor, every tick)', () => store.nextDueAt()],
    ['claimActivity (executor, every tick)', () => store.claimActivity(['shell'], now)],
    ['dueSchedules (executor, every tick)', () => store.dueSchedules(now)],
    ['getRun (every pass)', () => store.getRun(someRun)],
    ['readJournal (every pass)', () => store.readJournal(someRun)],
    ['readLogs', () => store.readLogs(someRun)],
    ['hasSignal (a signal sent)', () => store.hasSignal(someRun, 'go')],
    ['listEventWaiters (an event emitted)', () => store.listEventWaiters(project, 'order.paid')],
    ['acquireLease + releaseLeases (spool lock)', async () => (await store.acquireLease(project, 'g', someRun), await store.releaseLeases(someRun))],
    ['listRuns of a project, newest first (spool runs)', () => store.listRuns({ project, limit: 50 })],
    ['pageRuns, newest first (the run page)', () => store.pageRuns({ limit: 50 })],
    ['pageRuns of a project, waiting (runs by status)', () => store.pageRuns({ project, status: ['waiting'], limit: 50 })],
    ["countRuns of a project (the runs list's counts)", () => store.countRuns({ project })],
    ['pageRuns of a project, text found nowhere (a search)', () => store.pageRuns({ project, text: 'no-such-text', limit: 50 })],
    ['recoverInterruptedRuns (a new leader)', () => store.recoverInterruptedRuns(now)],
    ['openWaitsSince (the operator, each metrics scrape)', () => store.openWaitsSince(now)],
    [`listUnfinishedRunStates of one project (k8s:${project}:)`, () => store.listUnfinishedRunStates(`k8s:${project}:`)],
    ["listUnfinishedRunStates, all (the operator's full sweep: a new leader's first, then every minute)", () => store.listUnfinishedRunStates('k8s:')],
    ["listRunStatesChangedSince, all (the operator's sweep every second)", () => store.listRunStatesChangedSince('k8s:', since)],
  ];
  const results = [];
  for (const [name, call] of calls) results.push(await timeCalls(name, call));
  return results;
}

/** PROBES runs come due 25 ms apart; how late the executor starts each one's pass. */
async function wakeLatency() {
  const due = new Map();
  // Far enough ahead that every probe is asleep, and the executor started, before the first is due.
  const first = Date.now() + 5_000 + PROBES * 40;
  for (let k = 0; k < PROBES; k++) {
    const wakeAt = new Date(first + k * PROBE_SPACING_MS);
    due.set(await sleepingRun(`p${k % 50}`, wakeAt), wakeAt.getTime());
  }
  if (Date.now() > first) log(`the probes took too long to make: the first was due ${Date.now() - first} ms before the executor started`);
  const late = [];
  let allStarted;
  const done = new Promise((resolve) => (allStarted = resolve));
  const executor = new Executor(store, {
    output: () => {
      throw new Error('no pass runs in this process');
    },
    runPass: async (run) => {
      const wakeAt = due.get(run.id);
      if (wakeAt !== undefined) late.push(Date.now() - wakeAt);
      if (late.length === PROBES) allStarted();
      const until = new Date(Date.now() + 30 * DAY);
      return { kind: 'suspended', suspension: { awaiting: `timer ${until.toISOString()}`, wait: { kind: 'timer', until: until.toISOString() }, wakeAt: until } };
    },
    onError: (message, error) => log(`executor: ${message}: ${error}`),
  });
  executor.start();
  const limit = setTimeout(() => allStarted(), 120_000 + PROBES * PROBE_SPACING_MS);
  await done;
  clearTimeout(limit);
  await executor.stop();
  return { n: late.length, median: median(late), p99: percentile(late, 99), max: Math.max(...late) };
}

const rows = [];
let made = SAMPLE;
let before = { runs: 0, bytes: 0 };
for (const size of SIZES) {
  const t0 = Date.now();
  while (made < size) {
    const to = Math.min(size, made + BATCH);
    await copyTemplate(made, to);
    made = to;
    if (made % 200_000 === 0) log(`${made} runs`);
  }
  await db.query('analyze');
  const fill = (Date.now() - t0) / 1000;
  const runsNow = await count('runs');
  log(`${runsNow} runs asleep (filled in ${fill.toFixed(0)} s); wake-up latency of ${PROBES} probes`);
  const wake = await wakeLatency();
  const tables = { runs: await sizeOf('runs'), journal: await sizeOf('journal'), run_logs: await sizeOf('run_logs') };
  const bytes = tables.runs + tables.journal + tables.run_logs;
  const someRun = (await db.query(`select id from runs where project = 'p7' and status = 'waiting' order by id limit 1 offset 3`)).rows[0].id;
  log(`hot queries at ${runsNow}`);
  const queries = await hotQueries(someRun);
  const sleeping = await count(`runs where status = 'waiting'`);
  rows.push({ runs: runsNow, sleeping, fill, wake, tables, bytes, marginal: (bytes - before.bytes) / (runsNow - before.runs), queries });
  before = { runs: runsNow, bytes };
  log(`${runsNow}: wake median ${wake.median} ms, p99 ${wake.p99} ms; ${(bytes / runsNow).toFixed(0)} B/run`);
}

const journalRows = await count('journal');
await db.end();
await store.close();
await postgres?.stop();

const n = (x) => x.toLocaleString('en-US');
const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
const kib = (bytes) => `${(bytes / 1024).toFixed(2)} KiB`;
const mib = (bytes) => `${n(Math.round(bytes / 2 ** 20))} MiB`;
const out = [];
out.push(`- date: ${new Date().toISOString()}; ${cpus().length} cores; load average at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}; PostgreSQL ${serverVersion}${postgres ? ' (a throwaway server: fsync off, default memory settings)' : ''}${PARTITIONS ? `; the journal in ${PARTITIONS} hash partitions` : ''}`);
out.push(`- command: \`node bench/million-sleepers.mjs --runs ${RUNS} --probes ${PROBES} --reps ${REPS}${PARTITIONS ? ` --partitions ${PARTITIONS}` : ''}\`; ${n(journalRows)} journal rows at the end`);
out.push('');
out.push(`| runs asleep | made in | wake-up latency median / p99 / max (n) | runs | journal | run_logs | bytes per run (marginal) |`);
out.push('|---|---|---|---|---|---|---|');
for (const row of rows) {
  out.push(
    `| ${n(row.sleeping)} | ${row.fill.toFixed(0)} s | ${ms(row.wake.median)} / ${ms(row.wake.p99)} / ${ms(row.wake.max)} ms (${row.wake.n}) | ${mib(row.tables.runs)} | ${mib(row.tables.journal)} | ${mib(row.tables.run_logs)} | ${kib(row.bytes / row.runs)} (${kib(row.marginal)}) |`,
  );
}
out.push('');
out.push(`Each hot query, median / slowest of ${REPS} calls through the store (ms):`);
out.push('');
out.push(`| query, by runs asleep | ${rows.map((row) => n(row.sleeping)).join(' | ')} |`);
out.push(`|---|${rows.map(() => '---').join('|')}|`);
for (const [i, { name }] of rows[0].queries.entries()) {
  out.push(`| ${name.replace(/k8s:p\d+:/, 'k8s:pN:')} | ${rows.map((row) => `${ms(row.queries[i].median)} / ${ms(row.queries[i].max)}`).join(' | ')} |`);
}
process.stdout.write(`${out.join('\n')}\n`);
