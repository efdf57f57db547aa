#!/usr/bin/env node
/**
 * `spool dev --database-url` under load (issue 19, item 1), against a throwaway PostgreSQL:
 *
 *   A. runs per second of a 3-step bash script, BATCH submitted at once on an idle server;
 *   B. the delay from `POST .../signals` to the waiting run's next pass's script starting, on the
 *      idle server and again during the storm (median, p99);
 *   C. SLEEPERS runs put to sleep at once, then RATE events a second into a handler for SECONDS,
 *      each handler run claiming its event with `state add`: events accepted per second, handler
 *      runs finished per second, how long the backlog takes to drain, every sleeper waking;
 *   and throughout, the server's RSS, and where the CPU went (the server process, PostgreSQL, and
 *   everything else: the scripts, their bash, the spool clients: process starts).
 *
 *   npm run bench:dev-load                    # build first; prints a markdown section
 *   node bench/dev-load.mjs --sleepers 200 --rate 20 --seconds 20
 *
 * Timings are never asserted: test/load/dev-load.test.ts checks the same mix for correctness.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { median, percentile } from './lib/stats.mjs';
import { loadTestPostgres } from './lib/test-postgres.mjs';
import { TICK, postgresJiffies, postmasterOf, rssMiB, treeJiffies } from './lib/proc.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const SLEEPERS = arg('sleepers', 1000);
const RATE = arg('rate', 100);
const SECONDS = arg('seconds', 60);
const BATCH = arg('batch', 50);
const SIGNALS = arg('signals', 20);
const DRAIN_LIMIT_S = arg('drain-limit', 900);
const started = Date.now();
const log = (line) => process.stderr.write(`[bench:dev-load ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'spool-dev-load-'));
const marks = join(dir, 'marks');
const { startPostgres } = await loadTestPostgres(ROOT);
const postgres = await startPostgres();
const db = new pg.Client({ connectionString: postgres.url });
await db.connect();

const port = 20_000 + Math.floor(Math.random() * 20_000);
const server = spawn(process.execPath, [join(ROOT, 'bin', 'spool'), 'dev', '--port', String(port), '--data-dir', join(dir, 'data'), '--database-url', postgres.url], {
  cwd: dir,
  env: { ...process.env, SPOOL_SERVER: '' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let serverOutput = '';
server.stdout.on('data', (chunk) => (serverOutput += chunk));
server.stderr.on('data', (chunk) => (serverOutput += chunk));
const url = `http://127.0.0.1:${port}`;
for (let i = 0; !serverOutput.includes('listening'); i++) {
  if (i > 600) throw new Error(`spool dev did not start:\n${serverOutput}`);
  await sleep(100);
}

const api = async (method, path, body) => {
  const response = await fetch(`${url}/v1${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
};
const submit = async (name, script) => (await api('POST', '/runs', { workflow: name, interpreter: 'bash -eu', script, cwd: dir })).run.id;
const counts = async (where) => Object.fromEntries((await db.query(`select status, count(*)::int as n from runs where ${where} group by status`)).rows.map((r) => [r.status, r.n]));
const until = async (what, check, limitS) => {
  const deadline = Date.now() + limitS * 1000;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) {
      log(`gave up waiting for ${what} after ${limitS}s`);
      return false;
    }
    await sleep(250);
  }
};

// ---- what the machine spends: /proc jiffies of the server, of PostgreSQL, and of everything ----
const postmaster = postmasterOf(postgres.url, tmpdir());
const machineBusy = () => {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return fields.reduce((a, b) => a + b, 0) - fields[3] - fields[4];
};
const sample = () => ({ at: Date.now(), server: treeJiffies(server.pid), postgres: postgresJiffies(postmaster), busy: machineBusy() });
const share = (from, to) => {
  const seconds = (to.at - from.at) / 1000;
  const cores = (j) => j / TICK / seconds;
  const rest = to.busy - from.busy - (to.server - from.server) - (to.postgres - from.postgres);
  return `server ${cores(to.server - from.server).toFixed(2)} cores, PostgreSQL ${cores(to.postgres - from.postgres).toFixed(2)}, everything else (scripts, bash, spool clients; other users of the machine) ${cores(rest).toFixed(2)} of ${cpus().length}`;
};
const rss = [];
const rssOf = () => rssMiB(server.pid);
const rssTimer = setInterval(() => rss.push(rssOf()), 1000);

const load = { start: loadavg().map((n) => n.toFixed(2)).join(' ') };
const results = {};

// ---- A: runs per second of a 3-step script, BATCH at once ----
log(`A: ${BATCH} runs of a 3-step script at once`);
const THREE = 'spool step a -- true\nspool step b -- true\nspool step c -- true\n';
{
  const from = sample();
  const t0 = Date.now();
  const ids = await Promise.all(Array.from({ length: BATCH }, () => submit('three.sh', THREE)));
  await until('the 3-step runs', async () => (await counts(`workflow = 'three.sh'`)).succeeded === BATCH, 600);
  const { rows } = await db.query(`select max(finished_at) as last from runs where id = any($1)`, [ids]);
  const seconds = (new Date(rows[0].last).getTime() - t0) / 1000;
  results.threeStep = { runs: BATCH, seconds, perSecond: BATCH / seconds, cpu: share(from, sample()) };
  log(`A: ${(BATCH / seconds).toFixed(1)} runs/s`);
}

// ---- B (idle): signal → next pass ----
const WAITER = (n) => `echo "$SPOOL_PASS $EPOCHREALTIME" >> ${marks}.${n}\nspool wait signal go --timeout 1h\nspool step done -- true\n`;
const waiters = [];
for (let i = 0; i < 2 * SIGNALS; i++) waiters.push({ n: i, id: await submit('waiter.sh', WAITER(i)) });
await until('the waiters to wait', async () => (await counts(`workflow = 'waiter.sh'`)).waiting === waiters.length, 600);
const signal = async (waiter) => {
  waiter.sentAt = Date.now() / 1000;
  await api('POST', `/runs/${encodeURIComponent(waiter.id)}/signals`, { name: 'go', payload: '' });
};
const delays = (some) =>
  some.map((w) => {
    const pass2 = readFileSync(`${marks}.${w.n}`, 'utf8').split('\n').find((line) => line.startsWith('2 '));
    return pass2 ? (Number(pass2.split(' ')[1]) - w.sentAt) * 1000 : Number.NaN;
  }).filter((d) => !Number.isNaN(d));
log(`B: ${SIGNALS} signals, one every 500 ms, on the idle server`);
for (const waiter of waiters.slice(0, SIGNALS)) {
  await signal(waiter);
  await sleep(500);
}
await until('the signalled waiters', async () => waiters.slice(0, SIGNALS).every((w) => readFileSync(`${marks}.${w.n}`, 'utf8').includes('\n2 ')), 120);
results.signalIdle = delays(waiters.slice(0, SIGNALS));

// ---- C: sleepers, then the storm ----
log(`C: ${SLEEPERS} sleepers`);
// Long enough that the first are still asleep when the last fall asleep, even on a loaded machine.
const SLEEPER = `spool sleep ${Math.max(180, 2 * SECONDS)}s\nspool step woke -- true\n`;
{
  const from = sample();
  const t0 = Date.now();
  for (let i = 0; i < SLEEPERS; i += 100) await Promise.all(Array.from({ length: Math.min(100, SLEEPERS - i) }, () => submit('sleeper.sh', SLEEPER)));
  let most = 0;
  await until(
    'every sleeper past its first pass',
    async () => {
      const now = await counts(`workflow = 'sleeper.sh'`);
      most = Math.max(most, now.waiting ?? 0);
      return (now.waiting ?? 0) + (now.succeeded ?? 0) === SLEEPERS;
    },
    900,
  );
  results.asleep = { seconds: (Date.now() - t0) / 1000, rssMiB: rssOf(), cpu: share(from, sample()), most };
  log(`C: ${SLEEPERS} asleep after ${results.asleep.seconds.toFixed(0)} s, RSS ${results.asleep.rssMiB.toFixed(0)} MiB`);
}
const ON_ORDER = `order="$(grep -o '"order":[0-9]*' "$SPOOL_INPUT_FILE" | head -1 | cut -d: -f2)"
rc=0
spool state add "order-$order" --entity orders || rc=$?
case $rc in
  0) ;;
  3) echo "order $order already handled"; exit 0 ;;
  *) exit 1 ;;
esac
spool step ship -- echo "shipped order $order"
`;
await api('PUT', '/handlers/orders', { eventType: 'order.placed', workflow: 'on-order.sh', interpreter: 'bash -eu', script: ON_ORDER, cwd: dir });
log(`C: ${RATE} events/s for ${SECONDS} s`);
{
  const from = sample();
  const t0 = Date.now();
  const total = RATE * SECONDS;
  const emits = [];
  let refused = 0;
  const reasons = new Map();
  const refuse = (error) => {
    refused++;
    const reason = String(error?.cause?.code ?? error?.message ?? error).slice(0, 80);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  };
  const signalling = (async () => {
    for (const waiter of waiters.slice(SIGNALS)) {
      await sleep((SECONDS * 1000) / (SIGNALS + 1));
      await signal(waiter).catch(refuse);
    }
  })();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    emits.push(api('POST', '/events', { type: 'order.placed', payload: { order: i % Math.ceil(total / 2) } }).catch(refuse));
  }
  await Promise.all(emits);
  const emittedIn = (Date.now() - t0) / 1000;
  await signalling;
  const window = sample();
  const during = await counts(`handler = 'orders'`);
  log(`C: emitted ${total} in ${emittedIn.toFixed(1)} s; handler runs so far ${JSON.stringify(during)}`);
  // Every event the server accepted has its handler run (made as the event is recorded).
  const accepted = (await db.query(`select count(*)::int as n from events where type = 'order.placed'`)).rows[0].n;
  const drained = await until('the handler runs to drain', async () => ((await counts(`handler = 'orders'`)).succeeded ?? 0) >= accepted, DRAIN_LIMIT_S);
  const end = sample();
  const { rows } = await db.query(
    `select count(*)::int as n, extract(epoch from max(finished_at) - min(created_at)) as span,
            percentile_cont(0.5) within group (order by extract(epoch from finished_at - created_at)) as p50,
            percentile_cont(0.99) within group (order by extract(epoch from finished_at - created_at)) as p99
       from runs where handler = 'orders' and status = 'succeeded'`,
  );
  const shipped = (await db.query(`select count(*)::int as n from cells where scope = 'entity:orders'`)).rows[0].n;
  results.storm = {
    events: total,
    refused,
    accepted,
    reasons: [...reasons].map(([reason, n]) => `${n}× ${reason}`).join(', '),
    emittedPerSecond: total / emittedIn,
    finishedInWindow: during.succeeded ?? 0,
    handled: rows[0].n,
    drained,
    drainSeconds: (end.at - t0) / 1000,
    handledPerSecond: rows[0].n / Number(rows[0].span),
    latencyP50: Number(rows[0].p50),
    latencyP99: Number(rows[0].p99),
    claims: shipped,
    cpuWindow: share(from, window),
    cpuDrain: share(window, end),
  };
  results.signalStorm = delays(waiters.slice(SIGNALS));
}
await until('every sleeper awake', async () => (await counts(`workflow = 'sleeper.sh'`)).succeeded === SLEEPERS, 600);
results.sleepersWoke = (await counts(`workflow = 'sleeper.sh'`)).succeeded ?? 0;
results.lost = await counts(`status not in ('succeeded', 'waiting')`);
clearInterval(rssTimer);
load.end = loadavg().map((n) => n.toFixed(2)).join(' ');

const ms = (values) => (values.length ? `${median(values).toFixed(0)} / ${percentile(values, 99).toFixed(0)}` : 'n/a');
const { storm } = results;
process.stdout.write(`## spool dev under load, on PostgreSQL

- date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${cpus().length} cores; load average (1/5/15 min) at start ${load.start}, at end ${load.end}
- command: \`node bench/dev-load.mjs --sleepers ${SLEEPERS} --rate ${RATE} --seconds ${SECONDS} --batch ${BATCH} --signals ${SIGNALS}\`

| measurement | result |
|---|---|
| 3-step bash script, ${BATCH} submitted at once on an idle server | ${results.threeStep.perSecond.toFixed(1)} runs/s (${results.threeStep.seconds.toFixed(1)} s); CPU: ${results.threeStep.cpu} |
| signal → the waiting run's next pass's script starts, idle (median / p99, n=${results.signalIdle.length}) | ${ms(results.signalIdle)} ms |
| ${SLEEPERS} runs put to sleep at once | all asleep after ${results.asleep.seconds.toFixed(0)} s (${results.asleep.most} asleep at once at most); server RSS then ${results.asleep.rssMiB.toFixed(0)} MiB; CPU: ${results.asleep.cpu} |
| ${RATE} events/s offered for ${SECONDS} s into a handler (${storm.events} events) | ${storm.accepted} accepted, ${storm.refused} refused${storm.reasons ? ` (${storm.reasons})` : ''}; the offering took ${(storm.events / storm.emittedPerSecond).toFixed(0)} s, so ${(storm.accepted / (storm.events / storm.emittedPerSecond)).toFixed(1)} accepted/s; handler runs finished ${storm.handledPerSecond.toFixed(1)}/s (${storm.finishedInWindow} within the window; all ${storm.handled} after ${storm.drainSeconds.toFixed(0)} s${storm.drained ? '' : ', NOT drained'}) |
| event → its handler run finished (median / p99) | ${storm.latencyP50.toFixed(1)} / ${storm.latencyP99.toFixed(1)} s (the backlog's queueing) |
| claims (\`state add\`) | ${storm.claims} orders claimed (${Math.ceil(storm.events / 2)} distinct orders offered, each twice) |
| CPU during the storm / while draining | ${storm.cpuWindow} / ${storm.cpuDrain} |
| signal → next pass during the storm (median / p99, n=${results.signalStorm.length}) | ${ms(results.signalStorm)} ms |
| sleepers woken | ${results.sleepersWoke} of ${SLEEPERS} |
| runs neither succeeded nor waiting at the end | ${JSON.stringify(results.lost)} |
| server RSS (max / at end) | ${Math.max(...rss).toFixed(0)} / ${(rss.at(-1) ?? 0).toFixed(0)} MiB |
`);

server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await db.end();
await postgres.stop();
rmSync(dir, { recursive: true, force: true });
