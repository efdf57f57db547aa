// Many Runs asleep on the real node, then all waking in the same second (issue 19, item 2):
//
//   npm run bench:node-sleepers                 (root: the local node, as the e2e suite)
//   BENCH_RUNS=300 npm run bench:node-sleepers  (fewer; default 1,000)
//   BENCH_WAKE_AFTER=600 ...                    (seconds from creating them to WAKE; default 120 + 1.8 a run)
//   BENCH_WARM_PODS=8 ...                       (the Workflow's spec.warmPods; default none)
//
// The Runs are those of test/e2e/support/sleepers.ts (test/e2e/scale.e2e.ts checks a bounded count
// of them for correctness): a first pass works out how long to sleep so that all wake at WAKE,
// sleeps, and a second pass runs a 2 s step that prints when it starts and ends. Prints:
//   - first passes per minute, and how long until all were asleep with no pod left;
//   - the leader's RSS and V8 heap (its /metrics) while all sleep, and the largest seen overall,
//     with its informer caches' object counts;
//   - from WAKE: the delay until each run's step started (median, p99) and passes per minute;
//   - the most steps that ran at once (at most the operator's --max-running-passes);
//   - the largest Run status (bytes of JSON) and passes per run;
//   - how many woken passes ran in a warm pod, and where the node's CPU went from WAKE to the last
//     step's end (./cpu-profile.ts) beside the leader's own CPU and passes started.
// Figures go to docs/benchmarks.md by hand ("1,000 sleeping Runs on the real node").
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, openCluster, SYSTEM, type Cluster } from '../../test/e2e/support/cluster.js';
import { cpuBetween, cpuSnapshot } from './cpu-profile.js';
import { hyperspoolFor } from './install.js';
import { createSleepers, leaderMetrics, mostAtOnce, openJournalDatabase, passPods, phaseCounts, quantile, recorded, runsIn, samples, type RunResource } from '../../test/e2e/support/sleepers.js';

const RUNS = Number.parseInt(process.env.BENCH_RUNS ?? '', 10) || 1000;
const WARM_PODS = Number.parseInt(process.env.BENCH_WARM_PODS ?? '', 10) || 0;
// Room for every first pass at the 42 a minute measured on 2 cores (1.4 s a run), and a margin.
const WAKE_AFTER = Number(process.env.BENCH_WAKE_AFTER) || 120 + Math.ceil(1.8 * RUNS);
// Listing a thousand Runs costs kubectl and the API server a good part of a core, taken from the
// passes measured: looked at every 10 s (the figures come from the journal, not from these looks).
const POLL_MS = 10_000;
// Parking them, then every woken pass at no less than 20 a minute.
const TIMEOUT_MS = (WAKE_AFTER + 3 * RUNS + 600) * 1000;
const namespace = `bench-sleepers-${Date.now().toString(36)}`;
let cluster: Cluster;

beforeAll(async () => {
  cluster = await openCluster(namespace);
  await hyperspoolFor(cluster);
  await withDefaultLease();
  await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
});

afterAll(async () => {
  await cluster?.kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
  await cluster?.close();
});

const MiB = 2 ** 20;

/**
 * The e2e install's 4 s Lease (a killed leader's successor within a test) is renewed within 2.7 s,
 * which a node this busy misses now and then: each handover abandons the leader's passes, and they
 * replay. Measured with the operator's default Lease instead, as users install it.
 */
async function withDefaultLease(): Promise<void> {
  const path = '{.spec.template.spec.containers[0].args}';
  const args = JSON.parse((await cluster.kubectl('-n', SYSTEM, 'get', 'deployment', 'hyperspool-operator', '-o', `jsonpath=${path}`)) || '[]') as string[];
  const at = args.indexOf('--lease-duration');
  if (at < 0) return;
  const patch = [{ op: 'remove', path: `/spec/template/spec/containers/0/args/${at + 1}` }, { op: 'remove', path: `/spec/template/spec/containers/0/args/${at}` }];
  await cluster.kubectl('-n', SYSTEM, 'patch', 'deployment', 'hyperspool-operator', '--type=json', '-p', JSON.stringify(patch));
  await cluster.kubectl('-n', SYSTEM, 'rollout', 'status', 'deployment/hyperspool-operator', '--timeout=180s');
}

/** The leader's memory and caches, from its /metrics. */
async function leaderMemory(): Promise<{ rss: number; heap: number; caches: Record<string, number> }> {
  const text = await leaderMetrics(cluster);
  return {
    rss: samples(text, 'hyperspool_process_resident_memory_bytes').get('') ?? NaN,
    heap: samples(text, 'hyperspool_nodejs_heap_size_used_bytes').get('') ?? NaN,
    caches: Object.fromEntries(samples(text, 'hyperspool_informer_objects')),
  };
}

/** The leader's CPU seconds and passes started so far. */
async function leaderCpu(): Promise<{ cpu: number; passes: number }> {
  const text = await leaderMetrics(cluster);
  const passes = [...samples(text, 'hyperspool_passes_started_total').values()].reduce((sum, value) => sum + value, 0);
  return { cpu: samples(text, 'hyperspool_process_cpu_seconds_total').get('') ?? NaN, passes };
}

/** The second passes' Jobs there now (the first passes' went when they suspended), and whether each ran in a warm pod. */
async function woken(): Promise<{ name: string; warm: boolean }[]> {
  const jobs = await cluster.getJson<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>('-n', namespace, 'jobs', '-l', 'hyperspool.dev/pass=2');
  return jobs.items.map((job) => ({ name: job.metadata.name, warm: job.metadata.labels?.['hyperspool.dev/warm'] === 'assigned' }));
}

it(`${RUNS} runs asleep on the node, all waking in the same second`, async () => {
  const args = (await cluster.kubectl('-n', SYSTEM, 'get', 'deployment', 'hyperspool-operator', '-o', 'jsonpath={.spec.template.spec.containers[0].args}')).trim();
  const given = JSON.parse(args || '[]') as string[];
  const cap = given.includes('--max-running-passes') ? Number(given[given.indexOf('--max-running-passes') + 1]) : 16;
  const created = Date.now();
  const wakeAt = Math.ceil(created / 1000) + WAKE_AFTER;
  await createSleepers(cluster, namespace, RUNS, { wakeAt }, WARM_PODS ? { warmPods: WARM_PODS } : {});

  // Memory is sampled all along: the largest RSS is the figure that matters for a limit.
  let most = { rss: 0, heap: 0, caches: {} as Record<string, number> };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const now = await leaderMemory().catch(() => null);
      if (now && now.rss > most.rss) most = now;
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
  })();

  try {
    // All asleep at once with no pod left; on a node too slow to park them all before WAKE, the
    // most that were asleep at one time is reported instead (and the herd is smaller).
    let asleepAt = 0;
    let mostAsleep = 0;
    while (Date.now() / 1000 < wakeAt) {
      const runs = await runsIn(cluster, namespace);
      const waiting = runs.filter((run) => run.status?.phase === 'Waiting').length;
      mostAsleep = Math.max(mostAsleep, waiting);
      progress(`${waiting} of ${RUNS} asleep`);
      if (waiting === RUNS && (await passPods(cluster, namespace)).length === 0) {
        asleepAt = Date.now();
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const asleep = await leaderMemory();
    // From WAKE (or now, if parking ran past it): the node's CPU and the leader's.
    while (Date.now() < wakeAt * 1000) await new Promise((resolve) => setTimeout(resolve, 100));
    const [cpuAtWake, leaderAtWake] = [cpuSnapshot(), await leaderCpu()];
    let done: RunResource[];
    const warmOrNot = new Map<string, boolean>();
    const deadline = wakeAt * 1000 + 3 * RUNS * 1000;
    for (;;) {
      const runs = await runsIn(cluster, namespace);
      const failed = runs.find((run) => run.status?.phase === 'Failed');
      if (failed) throw new Error(`${failed.metadata.name} failed: ${failed.status?.message}`);
      progress(JSON.stringify(phaseCounts(runs)));
      if (runs.every((run) => run.status?.phase === 'Succeeded')) {
        done = runs;
        break;
      }
      // Pass Jobs stay until their TTL once their run has ended: counted while they are there.
      for (const job of await woken()) if (!warmOrNot.has(job.name)) warmOrNot.set(job.name, job.warm);
      if (Date.now() > deadline) throw new Error(`not all Succeeded in time: ${JSON.stringify(phaseCounts(runs))}`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const [cpuAtEnd, leaderAtEnd] = [cpuSnapshot(), await leaderCpu()];
    for (const job of await woken()) if (!warmOrNot.has(job.name)) warmOrNot.set(job.name, job.warm);
    const journal = await openJournalDatabase(cluster);
    const seen = await recorded(journal.db, namespace, { wakeAt }).finally(() => journal.close());
    expect(seen.statuses).toEqual({ succeeded: RUNS });
    expect(seen.repeated).toEqual([]);

    const starts = seen.work.map(([start]) => start).sort((a, b) => a - b);
    const delays = starts.map((start) => (start - wakeAt) * 1000);
    const lastEnd = Math.max(...seen.work.map(([, end]) => end));
    const firstPassesPerMin = asleepAt ? (RUNS / ((asleepAt - created) / 1000)) * 60 : NaN;
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const statusBytes = done.map((run) => Buffer.byteLength(JSON.stringify(run.status)));
    const lines = [
      `date ${new Date().toISOString()}; ${cpus().length} × ${cpus()[0]?.model}; load at end ${load}; --max-running-passes ${cap}`,
      asleepAt
        ? `${RUNS} runs created; all asleep with no pass pod after ${((asleepAt - created) / 1000).toFixed(0)} s (first passes ${firstPassesPerMin.toFixed(0)}/min)`
        : `${RUNS} runs created; not all asleep by WAKE (${wakeAt - Math.ceil(created / 1000)} s later): at most ${mostAsleep} at once`,
      `while all sleep: leader RSS ${(asleep.rss / MiB).toFixed(0)} MiB, heap used ${(asleep.heap / MiB).toFixed(0)} MiB, informer caches ${JSON.stringify(asleep.caches)}`,
      `largest leader RSS seen (every 5 s): ${(most.rss / MiB).toFixed(0)} MiB (heap ${(most.heap / MiB).toFixed(0)} MiB, caches ${JSON.stringify(most.caches)})`,
      `wake -> step started: median ${quantile(delays, 0.5).toFixed(0)} ms, p99 ${quantile(delays, 0.99).toFixed(0)} ms, last ${Math.max(...delays).toFixed(0)} ms`,
      `woken passes: ${RUNS} in ${(lastEnd - wakeAt).toFixed(0)} s = ${((RUNS / (lastEnd - wakeAt)) * 60).toFixed(0)} passes/min; steps at once at most ${mostAtOnce(seen.work)}`,
      `woken passes in a warm pod (spec.warmPods ${WARM_PODS}): ${[...warmOrNot.values()].filter(Boolean).length} of the ${warmOrNot.size} pass Jobs seen`,
      `from WAKE to the last step's end: ${cpuBetween(cpuAtWake, cpuAtEnd)}; the leader ${(leaderAtEnd.cpu - leaderAtWake.cpu).toFixed(0)} s of CPU, ${leaderAtEnd.passes - leaderAtWake.passes} passes started`,
      `passes per run: ${JSON.stringify(Object.fromEntries([...new Set(seen.passes)].map((n) => [n, seen.passes.filter((p) => p === n).length])))}; largest Run status ${Math.max(...statusBytes)} bytes`,
    ];
    console.log(`\nbench node-sleepers:\n  ${lines.join('\n  ')}\n`);
  } finally {
    sampling = false;
    await sampler;
  }
}, TIMEOUT_MS);

/** A line a minute on standard error, so that an hour's bench shows where it is. */
let lastProgress = 0;
function progress(line: string): void {
  if (Date.now() - lastProgress < 60_000) return;
  lastProgress = Date.now();
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}
