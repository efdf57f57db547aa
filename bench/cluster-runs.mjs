#!/usr/bin/env node
/**
 * 100,000 Runs on one cluster (issue 36, item 2). Brings up its own control plane (etcd and
 * kube-apiserver, hack/control-plane.sh, no node) and PostgreSQL, then grows one namespace to each
 * size in turn (1,000, 10,000, 100,000 Runs, up to --runs) and at each starts a fresh operator
 * (`spool operator`, a process acting as the ServiceAccount config/rbac gives it) and measures:
 *
 *   - the leader's time to sync: from its start to its first sweep (its informers listed
 *     everything), and to its work queue empty (its first look at every Run done);
 *   - the leader's RSS then (and its peak, VmHWM), and its informer caches' counts;
 *   - one wake-up's latency: PROBES runs asleep whose timers come due, from each one's wake_at to
 *     its next pass's Job created (there is no node to run it: the Job is the dispatch);
 *   - `kubectl get runs -n bench` (chunked, kubectl's default 500 a request) to /dev/null;
 *   - what `spool runs -n bench` costs: the store's newest page (the aggregated API's GET /v1/runs,
 *     here the store's pageRuns it calls) and the two label-selected Run lists it then asks the
 *     API server for (the page's 100 by run label, and the Runs not admitted yet);
 *   - kube-apiserver's and etcd's RSS, and etcd's database size.
 *
 * The Runs are made as a running cluster would hold them: each run's row copied in bulk SQL from a
 * template made through the store's API (a run that went to sleep for 30 days; a share --finished
 * of them succeeded a minute ago), and each Run with its run label and the status the operator
 * would have written (so a new leader finds nothing to change, as after a restart), written into
 * etcd in bulk (createRuns says why; --through-api creates each through the API server, a create
 * and a status patch, --parallel at once).
 *
 *   npm run bench:runs                              # build first; 1,000 and 10,000 Runs
 *   node bench/cluster-runs.mjs --runs 100000       # the largest by hand (about half an hour on 2 cores)
 *   node bench/cluster-runs.mjs --finished 0.5 --probes 10 --parallel 64
 *   node bench/cluster-runs.mjs --runs 20000 --heap-snapshot /tmp/snaps   # where the leader's memory goes
 *   node bench/cluster-runs.mjs --node-options ''   # V8 unbounded (the Deployment's NODE_OPTIONS otherwise)
 *   node bench/cluster-runs.mjs --runs 100000 --after-resync   # and the largest after its first resync (5 min on)
 *
 * Nothing here is asserted: test/operator/many-runs.test.ts checks the behaviour in CI.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import pg from 'pg';
import { number, option } from './lib/args.mjs';
import { median, percentile } from './lib/stats.mjs';
import { loadTestPostgres } from './lib/test-postgres.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(pathToFileURL(join(ROOT, 'dist', path)).href);
const run = promisify(execFile);
const RUNS = number('runs', 10_000);
const FINISHED = number('finished', 0.2, { whole: false });
const PROBES = number('probes', 5);
const PARALLEL = number('parallel', 48);
const THROUGH_API = process.argv.includes('--through-api');
/** Where the leader writes a heap snapshot at each size once its queue is empty (`--heap-snapshot DIR`). */
const HEAP_SNAPSHOT_DIR = option('heap-snapshot');
/** At the largest size, the leader is kept until its informers' first resync (5 minutes on) has relisted every Run, and measured again. */
const AFTER_RESYNC = process.argv.includes('--after-resync');
/** The operator's Node options as config/manager/deployment.yaml gives them (its heap limit), unless `--node-options '...'`. */
const NODE_OPTIONS =
  option('node-options') ?? /name: NODE_OPTIONS\s+value: (.+)/.exec(readFileSync(join(ROOT, 'config', 'manager', 'deployment.yaml'), 'utf8'))?.[1]?.trim() ?? '';
const SIZES = [...new Set([1_000, 10_000, 100_000].filter((size) => size < RUNS).concat(RUNS))];
const NAMESPACE = 'bench';
const GROUP = { group: 'hyperspool.dev', version: 'v1alpha1', plural: 'runs' };
const MiB = 1 << 20;

const started = Date.now();
const log = (line) => process.stderr.write(`[bench:runs ${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}\n`);
const seconds = (ms) => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
const mib = (bytes) => (bytes / MiB).toFixed(0);
const until = async (what, check, timeoutMs, everyMs = 100) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => false);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000}s`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
};
/** VmRSS and VmHWM of a process, in bytes. */
const memoryOf = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(/\d+/.exec(status.split('\n').find((line) => line.startsWith(field)) ?? '0')?.[0] ?? 0) * 1024;
  return { rss: kib('VmRSS:'), peak: kib('VmHWM:') };
};
const freePort = () =>
  new Promise((done, fail) => {
    const server = createServer().once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });

// ---- the control plane and PostgreSQL -------------------------------------------------------

const { stdout: built } = await run('bash', [join(ROOT, 'hack', 'build-k8s.sh'), 'kube-apiserver', 'etcd', 'kubectl'], { maxBuffer: 64 * MiB });
const KUBECTL = join(built.trim().split('\n').pop() ?? '', 'kubectl');
const planeDir = mkdtempSync(join(tmpdir(), 'spool-bench-runs-'));
const planeEnv = { ...process.env, HYPERSPOOL_PLANE_DIR: planeDir, HYPERSPOOL_PLANE_OWNER_PID: String(process.pid) };
const plane = (...args) => run('bash', [join(ROOT, 'hack', 'control-plane.sh'), ...args], { env: planeEnv, maxBuffer: 64 * MiB });
const cleanups = [];
process.once('exit', () => {
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch {
      // already gone
    }
  }
});
cleanups.push(() => rmSync(planeDir, { recursive: true, force: true }));
await plane('up');
// Synchronous: at exit, a spawned `down` would find its directory already removed (the cleanup
// before it in this list) and leave kube-apiserver running.
cleanups.push(() => execFileSync('bash', [join(ROOT, 'hack', 'control-plane.sh'), 'down', '--purge'], { env: planeEnv, stdio: 'ignore' }));
const adminConfig = join(planeDir, 'kubeconfig');
const kubectl = (...args) => run(KUBECTL, ['--kubeconfig', adminConfig, ...args], { cwd: ROOT, maxBuffer: 64 * MiB });
const pidOf = (name) => Number(readFileSync(join(planeDir, `${name}.pid`), 'utf8').trim());
const kube = new KubeConfig();
kube.loadFromFile(adminConfig);
const core = kube.makeApiClient(CoreV1Api);
const custom = kube.makeApiClient(CustomObjectsApi);
const batch = kube.makeApiClient(BatchV1Api);

await kubectl('apply', '-f', 'crds/');
await kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/runs.hyperspool.dev', 'crd/workflows.hyperspool.dev');
await until('the CRDs served', () => custom.listNamespacedCustomObject({ ...GROUP, namespace: 'default', limit: 1 }), 30_000);
for (const name of [NAMESPACE, 'hyperspool-system']) await core.createNamespace({ body: { metadata: { name } } });
await kubectl('apply', '--server-side', '-k', 'config/rbac');
// The operator acts as its ServiceAccount, with a token as the kubelet would project it.
const token = await core.createNamespacedServiceAccountToken({ namespace: 'hyperspool-system', name: 'hyperspool-operator', body: { spec: { audiences: [], expirationSeconds: 6 * 3600 } } });
const server = kube.getCurrentCluster();
const operatorConfig = new KubeConfig();
operatorConfig.loadFromOptions({
  clusters: [{ name: 'bench', server: server?.server ?? '', caData: server?.caData, caFile: server?.caFile }],
  users: [{ name: 'hyperspool-operator', token: token.status?.token ?? '' }],
  contexts: [{ name: 'operator', cluster: 'bench', user: 'hyperspool-operator', namespace: 'hyperspool-system' }],
  currentContext: 'operator',
});
const operatorKubeconfig = join(planeDir, 'operator.kubeconfig');
writeFileSync(operatorKubeconfig, operatorConfig.exportConfig());

const { startPostgres } = await loadTestPostgres(ROOT);
const postgres = await startPostgres();
cleanups.push(() => void postgres.stop());
const { openPostgresStore } = await dist('store/postgres.js');
const { settleRun } = await dist('engine/settle.js');
const { desiredRunStatus } = await dist('operator/runs/run-status.js');
const store = await openPostgresStore(postgres.url);
const db = new pg.Client({ connectionString: postgres.url });
await db.connect();

// ---- the runs: templates through the store's API, the mass copied -----------------------------

const SCRIPT = 'spool step fetch -- echo fetched\nspool sleep 30d\nspool step remind -- echo reminded\n';
await custom.createNamespacedCustomObject({
  group: 'hyperspool.dev',
  version: 'v1alpha1',
  namespace: NAMESPACE,
  plural: 'workflows',
  body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'remind' }, spec: { filename: 'remind.sh', script: SCRIPT } },
});
const keyOf = (i) => `run-${`b${i.toString(36)}`.padStart(16, '0')}`;
const idOf = (key) => `k8s:${NAMESPACE}:${key}`;

/** A run that ran one step and sleeps until `wakeAt`, made as a pass makes it. */
async function sleepingRun(key, wakeAt) {
  const { run: made } = await store.createRun({ id: idOf(key), project: NAMESPACE, workflow: 'remind/remind.sh', interpreter: 'bash', script: SCRIPT, input: { orderId: 'ord_4242' } });
  const passing = await store.startPass(made.id);
  const at = (position, kind, verb, name, data) => ({ runId: made.id, position, kind, verb, name, occurrence: 0, data });
  await store.appendJournalEntries([at(0, 'call', 'step', 'fetch', {}), at(0, 'result', 'step', 'fetch', { stdout: 'fetched\n', exitCode: 0 })]);
  const time = wakeAt.toISOString();
  await store.appendJournal(at(1, 'call', 'sleep', '', { until: time }));
  await settleRun(store, passing, { kind: 'suspended', suspension: { awaiting: `timer ${time}`, wait: { kind: 'timer', until: time }, wakeAt } }, new Date());
  return made.id;
}

const TEMPLATES = { asleep: `run-${'tasleep'.padStart(16, '0')}`, done: `run-${'tdone'.padStart(16, '0')}` };
const asleep = await sleepingRun(TEMPLATES.asleep, new Date(Date.now() + 30 * 86_400_000));
const done = await sleepingRun(TEMPLATES.done, new Date(Date.now() + 30 * 86_400_000));
await db.query(`update runs set status = 'succeeded', wait = null, awaiting = null, wake_at = null, finished_at = now() where id = $1`, [done]);
/** The status the operator writes for each kind of run (the same for every copy but its runId). */
const statusOf = async (id) => desiredRunStatus({ metadata: { generation: 1 } }, await store.getRun(id));
const templates = { asleep: { id: asleep, status: await statusOf(asleep) }, done: { id: done, status: await statusOf(done) } };
const finishedOf = (i) => i % Math.max(1, Math.round(1 / FINISHED)) === 1 && FINISHED > 0;

/** Runs number [from, to) in the store: a copy of their template's row, only the id changed. */
async function copyRows(from, to) {
  for (const [template, finished] of [[templates.asleep.id, false], [templates.done.id, true]]) {
    const ids = [];
    for (let i = from; i < to; i++) if (finishedOf(i) === finished) ids.push(idOf(keyOf(i)));
    await db.query(`insert into runs select (jsonb_populate_record(null::runs, to_jsonb(t) || jsonb_build_object('id', n.id))).* from runs t, unnest($2::text[]) as n(id) where t.id = $1`, [template, ids]);
  }
}

/** A Run as a running cluster holds it: created with its run label, then the status its operator wrote. */
async function createRun(key, status) {
  await custom.createNamespacedCustomObject({
    ...GROUP,
    namespace: NAMESPACE,
    body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: key, labels: { 'hyperspool.dev/run': key, 'hyperspool.dev/workflow': 'remind' } }, spec: { workflowRef: { name: 'remind' } } },
  });
  await custom.patchNamespacedCustomObjectStatus({ ...GROUP, namespace: NAMESPACE, name: key, body: { status: { ...status, runId: idOf(key) } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
}

// The templates have their Runs too: a run without one is given one by the leader (a store-born run).
for (const [key, template] of [[TEMPLATES.asleep, templates.asleep], [TEMPLATES.done, templates.done]]) await createRun(key, template.status);

/**
 * The mass of Runs, written into etcd as kube-apiserver stores them (a custom resource is JSON under
 * /registry/GROUP/PLURAL/NAMESPACE/NAME), 128 in a transaction through etcd's JSON gateway: through
 * the API server (a create and a status patch a Run) this machine made 34 Runs a second, so
 * 100,000 would take most of an hour. kube-apiserver's watch of etcd sees them as it sees its own
 * writes, and serves them as any other; what is skipped is only its admission and validation of
 * each, which the templates' Runs (created through it) went through. --through-api makes them all
 * through the API server.
 */
const etcdPort = /ETCD_CLIENT_PORT=(\d+)/.exec(readFileSync(join(planeDir, 'plane.env'), 'utf8'))?.[1];
const b64 = (text) => Buffer.from(text).toString('base64');
const runObject = (key, status, createdAt) => ({
  apiVersion: 'hyperspool.dev/v1alpha1',
  kind: 'Run',
  metadata: {
    name: key,
    namespace: NAMESPACE,
    uid: randomUUID(),
    generation: 1,
    creationTimestamp: createdAt,
    labels: { 'hyperspool.dev/run': key, 'hyperspool.dev/workflow': 'remind' },
  },
  spec: { workflowRef: { name: 'remind' } },
  status: { ...status, runId: idOf(key) },
});

async function createRuns(from, to) {
  let next = from;
  const createdAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const throughApi = async () => {
    while (next < to) {
      const i = next++;
      await createRun(keyOf(i), (finishedOf(i) ? templates.done : templates.asleep).status);
    }
  };
  const intoEtcd = async () => {
    while (next < to) {
      const batchFrom = next;
      next = Math.min(to, next + 128);
      const success = [];
      for (let i = batchFrom; i < next; i++) {
        const key = keyOf(i);
        const object = runObject(key, (finishedOf(i) ? templates.done : templates.asleep).status, createdAt);
        success.push({ requestPut: { key: b64(`/registry/hyperspool.dev/runs/${NAMESPACE}/${key}`), value: b64(JSON.stringify(object)) } });
      }
      const response = await fetch(`http://127.0.0.1:${etcdPort}/v3/kv/txn`, { method: 'POST', body: JSON.stringify({ success }) });
      if (!response.ok) throw new Error(`etcd txn: HTTP ${response.status} ${await response.text()}`);
    }
  };
  await Promise.all(Array.from({ length: THROUGH_API ? PARALLEL : 4 }, THROUGH_API ? throughApi : intoEtcd));
}

// ---- the operator ---------------------------------------------------------------------------

async function startOperatorProcess() {
  const [port, metricsPort, aggregatedPort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'spool'), 'operator', '--database-url', postgres.url, '--port', String(port), '--metrics-port', String(metricsPort), '--aggregated-port', String(aggregatedPort), '--namespace', 'hyperspool-system', '--lease-duration', '15'],
    {
      env: { ...process.env, KUBECONFIG: operatorKubeconfig, POD_NAME: 'bench-operator', NODE_OPTIONS: `${NODE_OPTIONS}${HEAP_SNAPSHOT_DIR ? ' --heapsnapshot-signal=SIGUSR2' : ''}`.trim() },
      ...(HEAP_SNAPSHOT_DIR ? { cwd: resolve(HEAP_SNAPSHOT_DIR) } : {}),
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  // BENCH_OPERATOR_LOG=FILE: every operator's log lines, each size's after the one before.
  if (process.env.BENCH_OPERATOR_LOG) child.stderr.on('data', (chunk) => appendFileSync(process.env.BENCH_OPERATOR_LOG, chunk));
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const exited = new Promise((done) => child.once('exit', done));
  cleanups.push(() => child.kill('SIGKILL'));
  return {
    pid: child.pid,
    metricsUrl,
    stderr: () => stderr,
    async metrics() {
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      const value = (name, labels = '') => Number(new RegExp(`^${name}${labels.replaceAll('{', '\\{').replaceAll('}', '\\}')} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
      return value;
    },
    /** A heap snapshot (node --heapsnapshot-signal) written into HEAP_SNAPSHOT_DIR, once it is whole. */
    async heapSnapshot(size) {
      const dir = resolve(HEAP_SNAPSHOT_DIR);
      const before = new Set(readdirSync(dir));
      child.kill('SIGUSR2');
      const file = await until('the heap snapshot', async () => readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name)), 10 * 60_000, 500);
      // Written by the process's main thread: once the leader answers its metrics again, the file is whole.
      await until('the leader answering again', () => fetch(`${metricsUrl}/metrics`).then((response) => response.ok), 10 * 60_000, 500);
      const named = join(dir, `leader-${size}.heapsnapshot`);
      renameSync(join(dir, file), named);
      return named;
    },
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 15_000))]);
      child.kill('SIGKILL');
    },
  };
}

// ---- the measures ---------------------------------------------------------------------------

/** PROBES runs whose timers come due 200 ms apart, 3 s on: from each one's wake_at to its pass's Job. */
async function wakeUps(size) {
  const wakes = [];
  const first = Date.now() + 3_000;
  for (let p = 0; p < PROBES; p++) {
    const key = `run-${`w${size}x${p}`.padStart(16, '0')}`;
    const wakeAt = new Date(first + p * 200);
    // A copy of the template asleep (made through the store's API here, the run would be pending a moment, and dispatched).
    await db.query(
      `insert into runs select (jsonb_populate_record(null::runs, to_jsonb(t) || jsonb_build_object('id', $2::text, 'wake_at', $3::timestamptz,
         'wait', jsonb_build_object('kind', 'timer', 'until', $4::text), 'awaiting', 'timer ' || $4::text))).* from runs t where t.id = $1`,
      [templates.asleep.id, idOf(key), wakeAt, wakeAt.toISOString()],
    );
    await createRun(key, await statusOf(idOf(key)));
    wakes.push({ key, wakeAt: wakeAt.getTime() });
  }
  const latencies = [];
  await Promise.all(
    wakes.map(async ({ key, wakeAt }) => {
      const seenAt = await until(
        `the pass Job of ${key}`,
        async () => (await batch.listNamespacedJob({ namespace: NAMESPACE, labelSelector: `hyperspool.dev/run=${key}` })).items.length > 0 && Date.now(),
        60_000,
        25,
      );
      latencies.push(seenAt - wakeAt);
    }),
  );
  return latencies.sort((a, b) => a - b);
}

async function timed(work) {
  const at = performance.now();
  await work();
  return performance.now() - at;
}

/** What `spool runs -n bench` asks for (src/cli/cluster/cluster-runs.ts), one after the other. */
async function spoolRunsCost() {
  let keys = [];
  const page = await timed(async () => {
    keys = (await store.pageRuns({ project: NAMESPACE, sort: '-created', limit: 100 })).runs.map((found) => found.id.split(':')[2]);
  });
  const named = await timed(() => custom.listNamespacedCustomObject({ ...GROUP, namespace: NAMESPACE, labelSelector: `hyperspool.dev/run in (${keys.join(',')})` }));
  const unadmitted = await timed(() => custom.listNamespacedCustomObject({ ...GROUP, namespace: NAMESPACE, labelSelector: '!hyperspool.dev/run' }));
  return { page, named, unadmitted, total: page + named + unadmitted };
}

const rows = [];
let made = 0;
log(`control plane up (${planeDir}); PostgreSQL at ${postgres.url}; sizes ${SIZES.join(', ')}, ${FINISHED * 100}% finished; the operator with NODE_OPTIONS='${NODE_OPTIONS}'`);
for (const size of SIZES) {
  const making = Date.now();
  await copyRows(made, size);
  await createRuns(made, size);
  const createSeconds = (Date.now() - making) / 1000;
  log(`${size} Runs made (${size - made} in ${createSeconds.toFixed(0)} s, ${((size - made) / createSeconds).toFixed(0)} Runs/s)`);
  made = size;

  const operator = await startOperatorProcess();
  const startedAt = Date.now();
  // The leader's gauges are first set by its first sweep, once its informers have synced.
  await until(
    'the leader synced',
    async () => {
      const value = await operator.metrics();
      return value('hyperspool_is_leader') === 1 && value('hyperspool_informer_objects', '{resource="runs"}') >= size;
    },
    30 * 60_000,
    200,
  );
  const ready = Date.now() - startedAt;
  // Its first look at every Run (each one's store record read, nothing to write) done.
  await until(
    'the work queue empty',
    async () => {
      const value = await operator.metrics();
      return value('hyperspool_queue_depth') === 0;
    },
    30 * 60_000,
    250,
  );
  const drained = Date.now() - startedAt;
  if (process.env.BENCH_DEBUG) process.stderr.write(operator.stderr());
  const memory = memoryOf(operator.pid);
  const value = await operator.metrics();
  const cached = { runs: value('hyperspool_informer_objects', '{resource="runs"}'), slim: value('hyperspool_informer_slim_objects', '{resource="runs"}') };
  const heap = value('hyperspool_nodejs_heap_size_used_bytes');
  const heapTotal = value('hyperspool_nodejs_heap_size_total_bytes');
  const external = value('hyperspool_nodejs_external_memory_bytes');
  log(`${size}: leader ready in ${seconds(ready)} s, queue empty in ${seconds(drained)} s, RSS ${mib(memory.rss)} MiB (peak ${mib(memory.peak)}), V8 heap used ${mib(heap)} MiB of ${mib(heapTotal)}, external ${mib(external)} MiB, ${cached.runs} Runs cached, ${cached.slim} lean`);
  if (HEAP_SNAPSHOT_DIR) log(`${size}: heap snapshot ${await operator.heapSnapshot(size)}`);

  const wakes = await wakeUps(size);
  log(`${size}: wake-up to Job created ${wakes.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  const get = await timed(() => run(KUBECTL, ['--kubeconfig', adminConfig, 'get', 'runs', '-n', NAMESPACE, '--no-headers'], { maxBuffer: 1 << 30 }));
  const spoolRuns = await spoolRunsCost();
  const apiserver = memoryOf(pidOf('kube-apiserver'));
  const etcd = memoryOf(pidOf('etcd'));
  const etcdDb = statSync(join(planeDir, 'etcd', 'member', 'snap', 'db')).size;
  const after = memoryOf(operator.pid);
  log(`${size}: kubectl get runs ${seconds(get)} s; spool runs ${spoolRuns.total.toFixed(0)} ms; kube-apiserver ${mib(apiserver.rss)} MiB, etcd ${mib(etcd.rss)} MiB, etcd db ${mib(etcdDb)} MiB; leader after ${mib(after.rss)} MiB`);
  let resynced;
  if (AFTER_RESYNC && size === SIZES.at(-1)) {
    await until('the Runs relisted by a resync', async () => (await operator.metrics())('hyperspool_informer_relists_total', '{kind="Run",reason="resync"}') >= 1, 15 * 60_000, 1000);
    // Its updates (every Run reported again) looked at: the queue empty once more.
    await until('the work queue empty after the resync', async () => (await operator.metrics())('hyperspool_queue_depth') === 0, 15 * 60_000, 250);
    resynced = memoryOf(operator.pid);
    log(`${size}: after a resync's relist RSS ${mib(resynced.rss)} MiB (peak ${mib(resynced.peak)})`);
  }
  rows.push({ size, createSeconds, ready, drained, memory, heap, after, resynced, cached, wakes, get, spoolRuns, apiserver, etcd, etcdDb });
  await operator.stop();
}

const load = loadavg().map((n) => n.toFixed(2)).join(', ');
const line = (cells) => `| ${cells.join(' | ')} |`;
const out = [
  `Run ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model ?? ''}), load average at the end ${load}; ${FINISHED * 100}% of the Runs finished, the rest asleep; ${PROBES} wake-ups a size; the operator with NODE_OPTIONS='${NODE_OPTIONS}'.`,
  '',
  line(['Runs', ...rows.map((r) => r.size.toLocaleString('en'))]),
  line(['---', ...rows.map(() => '---')]),
  line([THROUGH_API ? 'made (Runs/s, create + status)' : 'made (Runs/s, into etcd)', ...rows.map((r) => ((r.size - (rows[rows.indexOf(r) - 1]?.size ?? 0)) / r.createSeconds).toFixed(0))]),
  line(['leader synced (first sweep)', ...rows.map((r) => `${seconds(r.ready)} s`)]),
  line(['leader queue empty (every Run looked at)', ...rows.map((r) => `${seconds(r.drained)} s`)]),
  line(['leader RSS synced (peak)', ...rows.map((r) => `${mib(r.memory.rss)} MiB (${mib(r.memory.peak)})`)]),
  line(['leader V8 heap used, synced', ...rows.map((r) => `${mib(r.heap)} MiB`)]),
  line(['leader RSS at the end', ...rows.map((r) => `${mib(r.after.rss)} MiB`)]),
  ...(AFTER_RESYNC ? [line(["leader RSS after a resync's relist (peak)", ...rows.map((r) => (r.resynced ? `${mib(r.resynced.rss)} MiB (${mib(r.resynced.peak)})` : '-'))])] : []),
  line(['Runs cached (lean)', ...rows.map((r) => `${r.cached.runs} (${r.cached.slim})`)]),
  line(['wake-up to pass Job, median / max', ...rows.map((r) => `${median(r.wakes).toFixed(0)} / ${percentile(r.wakes, 100).toFixed(0)} ms`)]),
  line(['`kubectl get runs -n bench` (chunks of 500)', ...rows.map((r) => `${seconds(r.get)} s`)]),
  line(['`spool runs`: store page / Runs by label / not admitted', ...rows.map((r) => `${r.spoolRuns.page.toFixed(0)} / ${r.spoolRuns.named.toFixed(0)} / ${r.spoolRuns.unadmitted.toFixed(0)} ms`)]),
  line(['kube-apiserver RSS', ...rows.map((r) => `${mib(r.apiserver.rss)} MiB`)]),
  line(['etcd RSS', ...rows.map((r) => `${mib(r.etcd.rss)} MiB`)]),
  line(['etcd database', ...rows.map((r) => `${mib(r.etcdDb)} MiB`)]),
];
process.stdout.write(`${out.join('\n')}\n`);
await store.close?.();
await db.end();
process.exit(0);
