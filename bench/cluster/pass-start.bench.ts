// How long a run that waits takes to run again on a real node: from the moment its wait resolves
// to the moment the next pass's script starts in a new pod, and where that time goes.
//
//   npm run bench:cluster     (root: the local node of hack/local-cluster.sh, as the e2e suite)
//
// One run sleeps 1 s BENCH_PASSES times (default 20), so each of its passes but the first starts
// because a timer came due. Per pass:
//   resolved        the timer's due time (the `until` the journal recorded for that sleep)
//   job created     the pass's Job appears (the operator noticed the wake, claimed the pass, made it)
//   pod created     the Job's pod appears (kube-controller-manager's Job controller)
//   pod bound       the pod gets its node (kube-scheduler)
//   script started  the script's first line runs: `echo $EPOCHREALTIME` (the kubelet: sandbox, the
//                   agent sidecar, the script container and `spool pass` reaching the agent)
// and within the kubelet's share, as the kubelet reports them in the pod's status (it reports a
// change within its status sync, so these are later than the moment itself, by up to a second):
//   sandbox ready   the pod's IP appears (the pause container and the CNI's network)
//   agent started   the agent sidecar's container is running
// The middle three are when a watch from this process saw them, a millisecond or so after the API
// server stored them; all clocks are this machine's. Printed; with BENCH_WRITE=1 they replace the
// cluster section of docs/benchmarks.md (between its markers; `npm run bench` keeps that section).
// On a cluster this run did not bring up, it uses the Hyperspool installed there (./install.ts).
// A second run does the same with a warm pod (spec.warmPods: 1; sleeps of 3 s, so the pool has
// refilled before each wake) and prints wait resolved -> script started for the passes that ran in
// one (docs/benchmarks.md, "Warm pass pods"), split at the pod's assignment (its labels patched,
// as the watch saw it), with the Job's relabelling and the leader's mean from dispatch to the
// agent's ask for the script. A third times pods with nothing of ours in them, made by the bench
// itself (one container; a native sidecar and a main container, the pass pod's shape), from their
// binding to their first line: the node's own floor for a pod of each shape.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, openCluster, repo, sh, type Cluster } from '../../test/e2e/support/cluster.js';
import { leaderMetrics, samples } from '../../test/e2e/support/sleepers.js';
import { hyperspoolFor, writeResults } from './install.js';

const PASSES = Number.parseInt(process.env.BENCH_PASSES ?? '', 10) || 20;
const DOC = join(repo, 'docs', 'benchmarks.md');
const BEGIN = '<!-- cluster-bench:begin -->';
const END = '<!-- cluster-bench:end -->';

const namespace = `bench-${Date.now().toString(36)}`;
let cluster: Cluster;

beforeAll(async () => {
  cluster = await openCluster(namespace);
  await hyperspoolFor(cluster);
  await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
});

afterAll(async () => {
  await cluster?.kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
  await cluster?.close();
});

/** First time a watch saw something happen to a pass, by pass number. */
type Seen = Map<number, number>;

interface PodObject {
  metadata?: { labels?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: { podIP?: string; initContainerStatuses?: { name: string; started?: boolean }[] };
}

async function watchPasses(kubeConfig: KubeConfig): Promise<{ job: Seen; pod: Seen; bound: Seen; sandbox: Seen; agent: Seen; warm: Set<number>; assigned: Seen; stop(): void }> {
  const warm = new Set<number>();
  // A warm pod's assignment (its labels patched: the pass is its), by pass.
  const assigned: Seen = new Map();
  const job: Seen = new Map();
  const pod: Seen = new Map();
  const bound: Seen = new Map();
  const sandbox: Seen = new Map();
  const agent: Seen = new Map();
  const passOf = (object: { metadata?: { labels?: Record<string, string> } }): number =>
    Number(object.metadata?.labels?.['hyperspool.dev/pass'] ?? NaN);
  const first = (seen: Seen, pass: number, at: number): void => {
    if (Number.isInteger(pass) && !seen.has(pass)) seen.set(pass, at);
  };
  const watch = new Watch(kubeConfig);
  const onError = (error: unknown): void => {
    if (error && (error as Error).name !== 'AbortError') console.error(`bench: a watch ended: ${String(error)}`);
  };
  const jobs = await watch.watch(`/apis/batch/v1/namespaces/${namespace}/jobs`, {}, (_type, object: { metadata?: { labels?: Record<string, string> } }) => first(job, passOf(object), Date.now()), onError);
  const pods = await watch.watch(
    `/api/v1/namespaces/${namespace}/pods`,
    {},
    (_type, object: PodObject) => {
      const at = Date.now();
      const pass = passOf(object);
      first(pod, pass, at);
      // A warm pod (spec.warmPods) assigned this pass: made before the pass was due.
      if (object.metadata?.labels?.['hyperspool.dev/warm'] === 'assigned' && Number.isInteger(pass)) {
        warm.add(pass);
        first(assigned, pass, at);
      }
      if (object.spec?.nodeName) first(bound, pass, at);
      if (object.status?.podIP) first(sandbox, pass, at);
      if (object.status?.initContainerStatuses?.some((status) => status.name === 'agent' && status.started)) first(agent, pass, at);
    },
    onError,
  );
  return { job, pod, bound, sandbox, agent, warm, assigned, stop: () => (jobs.abort(), pods.abort()) };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? NaN) : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
};
/** The nearest-rank percentile: of 20 samples, p99 is the slowest. */
const percentile = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1] ?? NaN;
const ms = (value: number): string => `${Math.round(value)} ms`;

/**
 * Runs Workflow `name` (these extra spec fields), a run that sleeps `sleep` PASSES times, to its
 * end: each pass's moments as the watch saw them, each sleep's due time and each pass's first line.
 */
async function sleepyRun(name: string, sleep: string, spec: object = {}): Promise<{ seen: Awaited<ReturnType<typeof watchPasses>>; resolved: number[]; scriptStarted: Map<number, number> }> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.kubeconfig);
  const seen = await watchPasses(kubeConfig);
  const script = `echo "started $SPOOL_PASS $EPOCHREALTIME"\nfor i in $(seq ${PASSES}); do spool sleep ${sleep}; done\n`;
  await cluster.apply({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, namespace }, spec: { filename: `${name}.sh`, script, ...spec } });
  await cluster.apply({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: `${name}-1`, namespace }, spec: { workflowRef: { name } } });
  const done = await eventually(
    `the run's ${PASSES + 1} passes`,
    async () => {
      const run = await cluster.getJson<{ status?: { phase?: string; passes?: number; message?: string } }>('-n', namespace, 'run', `${name}-1`);
      if (run.status?.phase === 'Failed') throw new Error(`the run failed: ${run.status.message}\n${await cluster.operatorLogs()}`);
      return run.status?.phase === 'Succeeded' && run;
    },
    PASSES * 30_000,
  );
  seen.stop();
  expect(done.status?.passes).toBe(PASSES + 1);

  // The spool CLI reads the journal and the log through the operator, as a person who may view runs.
  const reader = await cluster.givenPerson(namespace, `reader-${name}`, 'hyperspool-view');
  const spool = async (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', reader, '-n', namespace]);
  const journal = JSON.parse(await spool('journal', `${name}-1`, '--json')) as { kind: string; verb: string; data: { until?: string } }[];
  const resolved = journal.filter((entry) => entry.verb === 'sleep' && entry.kind === 'call').map((entry) => Date.parse(entry.data.until ?? ''));
  const scriptStarted = new Map<number, number>();
  for (const line of (await spool('logs', `${name}-1`)).split('\n')) {
    const match = /^started (\d+) (\d+\.\d+)$/.exec(line);
    if (match) scriptStarted.set(Number(match[1]), Number(match[2]) * 1000);
  }
  return { seen, resolved, scriptStarted };
}

it(`measures wait resolved -> next pass's script started, over ${PASSES} passes`, async () => {
  const startedAt = Date.now();
  const { seen, resolved, scriptStarted } = await sleepyRun('naps', '1s');

  type Row = Record<'operator' | 'jobController' | 'scheduler' | 'kubelet' | 'sandbox' | 'agent' | 'script' | 'total', number> & { pass: number };
  const rows: Row[] = resolved.map((due, index) => {
    const pass = index + 2;
    const at = (moments: Seen): number => {
      const moment = moments.get(pass);
      if (moment === undefined) throw new Error(`pass ${pass}: not every moment was seen`);
      return moment;
    };
    const [job, pod, bound, sandbox, agent, started] = [seen.job, seen.pod, seen.bound, seen.sandbox, seen.agent, scriptStarted].map(at) as [number, number, number, number, number, number];
    return {
      pass,
      ...{ operator: job - due, jobController: pod - job, scheduler: bound - pod, kubelet: started - bound, total: started - due },
      ...{ sandbox: sandbox - bound, agent: agent - sandbox, script: started - agent },
    };
  });
  expect(rows).toHaveLength(PASSES);

  const stages = [
    ['wait resolved -> Job created', 'operator: notices the wake, claims the pass, creates the Job', 'operator'],
    ['Job created -> pod created', 'kube-controller-manager: the Job controller', 'jobController'],
    ['pod created -> pod bound', 'kube-scheduler', 'scheduler'],
    ['pod bound -> script started', 'kubelet and containerd: sandbox, agent sidecar, script container', 'kubelet'],
    ['&nbsp;&nbsp;bound -> sandbox ready', 'kubelet: the pause container, the CNI (as reported: the pod IP)', 'sandbox'],
    ['&nbsp;&nbsp;sandbox ready -> agent started', 'kubelet: the agent sidecar container (as reported)', 'agent'],
    ['&nbsp;&nbsp;agent started -> script started', 'kubelet: the script container; `spool pass` gets the script from the agent; bash reaches line 1', 'script'],
    ['**wait resolved -> script started**', '**the whole delay**', 'total'],
  ] as const;
  const table = stages.map(([stage, who, key]) => {
    const values = rows.map((row) => row[key]);
    return `| ${stage} | ${who} | ${ms(median(values))} | ${ms(percentile(values, 99))} |`;
  });
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const section = `${BEGIN}
## On a real node: a wait resolving to the next pass's script

Measured by \`BENCH_WRITE=1 npm run bench:cluster\` (\`bench/cluster/pass-start.bench.ts\`; without BENCH_WRITE it only prints) on the local node of
\`hack/local-cluster.sh\` (Kubernetes ${await cluster.kubectl('version', '-o', 'json').then((text) => (JSON.parse(text) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion)}, containerd, runc, the bridge CNI, kube-proxy in iptables mode), with
Hyperspool installed from \`config/\` (two operator replicas, PostgreSQL in a pod). One run sleeps 1 s ${PASSES} times:
each of its passes after the first starts because a timer came due. A pass's moments: the timer's due time (from the
journal), its Job and pod appearing and the pod being bound (first seen by a watch from the benchmark), and the
script's first line (\`echo $EPOCHREALTIME\` in the pod). One machine, one clock.

- date: ${new Date(startedAt).toISOString()}; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM; load average at end ${load}
- ${PASSES} passes (p99 of ${PASSES} samples is the slowest one)

| stage | who | median | p99 |
| --- | --- | --- | --- |
${table.join('\n')}

Where it goes: the control plane's share (operator, Job controller, scheduler) is ${ms(median(rows.map((row) => row.operator + row.jobController + row.scheduler)))} of the median
${ms(median(rows.map((row) => row.total)))}; the rest is the node starting a pod, which a faster operator cannot win back.

The kubelet's three sub-stages are read off the pod's status as the kubelet reports it, so a moment can show up
late (and the next stage shorter by as much); their sum is the kubelet's row. Per pass, operator + Job controller +
scheduler + kubelet = total (ms): ${rows.map((row) => `p${row.pass} ${Math.round(row.operator)}+${Math.round(row.jobController)}+${Math.round(row.scheduler)}+${Math.round(row.kubelet)}=${Math.round(row.total)}`).join(', ')}.
${END}`;
  const doc = readFileSync(DOC, 'utf8');
  const kept = doc.includes(BEGIN) ? doc.slice(0, doc.indexOf(BEGIN)).trimEnd() : doc.trimEnd();
  const after = doc.includes(END) ? doc.slice(doc.indexOf(END) + END.length).trim() : '';
  if (writeResults()) writeFileSync(DOC, `${kept}\n\n${section}\n${after ? `\n${after}\n` : ''}`);
  console.log(section);
  if (!writeResults()) console.log('bench: docs/benchmarks.md left as it is (BENCH_WRITE=1 writes this section there)');
});

/** The leader's pass start latency so far (dispatched -> the pod's agent asking for the script): its sum (s) and count. */
async function passStartLatency(): Promise<{ sum: number; count: number }> {
  const text = await leaderMetrics(cluster);
  const name = 'hyperspool_pass_start_latency_seconds';
  return { sum: samples(text, `${name}_sum`).get('') ?? NaN, count: samples(text, `${name}_count`).get('') ?? NaN };
}

it(`measures the same with a warm pod (spec.warmPods: 1), over ${PASSES} passes`, async () => {
  const before = await passStartLatency();
  // 3 s between passes: time for the pool to refill (a pod's start) after each pass took its pod.
  const { seen, resolved, scriptStarted } = await sleepyRun('warm-naps', '3s', { warmPods: 1 });
  const after = await passStartLatency();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  // Per pass: the timer due, the pod's assignment (as the watch saw its labels change), its Job's
  // relabelling (the same), the script's first line.
  const passes = resolved.map((due, index) => {
    const pass = index + 2;
    const [assigned, relabelled, started] = [seen.assigned.get(pass), seen.job.get(pass), scriptStarted.get(pass)].map((at) => at ?? NaN) as [number, number, number];
    return { pass, warm: seen.warm.has(pass), total: started - due, assigned: assigned - due, relabelled: relabelled - assigned, started: started - assigned };
  });
  const warm = passes.filter((pass) => pass.warm);
  const cold = passes.filter((pass) => !pass.warm);
  const figure = (label: string, values: number[]): string => `  ${label}: median ${ms(median(values))}, p99 ${ms(percentile(values, 99))}`;
  console.log(
    [
      `bench: warm pods, ${new Date().toISOString()}, load average ${load}: of ${passes.length} passes ${warm.length} ran in a warm pod`,
      figure('wait resolved -> script started, warm', warm.map((pass) => pass.total)),
      figure('  wait resolved -> pod assigned (operator: notices the wake, claims the pass, the JSON Patch)', warm.map((pass) => pass.assigned)),
      figure('  pod assigned -> script started (the answer, the agent, `spool pass`, bash)', warm.map((pass) => pass.started)),
      figure('  pod assigned -> its Job relabelled', warm.map((pass) => pass.relabelled)),
      `  dispatched -> the agent asks for the script (the leader's histogram over these passes, mean): ${ms(((after.sum - before.sum) / (after.count - before.count)) * 1000)} over ${after.count - before.count}`,
      ...(cold.length ? [`  and ${cold.length} in a pod of their own (none was waiting): median ${ms(median(cold.map((pass) => pass.total)))}`] : []),
      `  per pass, total (assigned + started) ms: ${passes.map((pass) => `p${pass.pass}${pass.warm ? 'w' : ''} ${Math.round(pass.total)} (${Math.round(pass.assigned)}+${Math.round(pass.started)})`).join(', ')}`,
    ].join('\n'),
  );
  expect(warm.length).toBeGreaterThan(0);
});

/**
 * The node's own floor: pods of one container (the runner image, bash printing its clock) and of the
 * pass pod's shape without Hyperspool in it (a native sidecar, then the main container), each
 * created here and timed to its first line. What no operator and no agent can go under.
 */
it(`measures bare pods on the same node, ${PASSES} of each shape, for the floor`, async () => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.kubeconfig);
  const bound: Seen = new Map();
  const watch = await new Watch(kubeConfig).watch(`/api/v1/namespaces/${namespace}/pods`, { labelSelector: 'bench=bare' }, (_type, object: PodObject & { metadata?: { name?: string } }) => {
    const index = Number(object.metadata?.labels?.['bench-index']);
    if (object.spec?.nodeName && !bound.has(index)) bound.set(index, Date.now());
  }, () => undefined);
  const line = ['bash', '-c', 'echo "started $EPOCHREALTIME"'];
  const shapes = {
    'one container': { containers: [{ name: 'main', image: 'hyperspool/runner:dev', imagePullPolicy: 'Never', command: line }] },
    'a native sidecar, then the main container (the pass pod\'s shape, nothing of ours in it)': {
      initContainers: [{ name: 'side', image: 'hyperspool/runner:dev', imagePullPolicy: 'Never', restartPolicy: 'Always', command: ['sleep', '600'] }],
      containers: [{ name: 'main', image: 'hyperspool/runner:dev', imagePullPolicy: 'Never', command: line }],
    },
  };
  const results: string[] = [];
  let index = 0;
  for (const [shape, spec] of Object.entries(shapes)) {
    const created: number[] = [];
    const fromBound: number[] = [];
    for (let n = 0; n < PASSES; n++, index++) {
      const name = `bare-${index}`;
      const at = Date.now();
      await cluster.apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { bench: 'bare', 'bench-index': String(index) } }, spec: { restartPolicy: 'Never', ...spec } });
      const log = await eventually(`${name}'s first line`, async () => /^started (\d+\.\d+)$/m.exec(await cluster.kubectl('-n', namespace, 'logs', name, '-c', 'main').catch(() => '')), 60_000);
      const started = Number(log[1]) * 1000;
      created.push(started - at);
      fromBound.push(started - (bound.get(index) ?? NaN));
      await cluster.kubectl('-n', namespace, 'delete', 'pod', name, '--wait=false', '--grace-period=0');
    }
    results.push(`  ${shape}: pod bound -> first line median ${ms(median(fromBound))} (p99 ${ms(percentile(fromBound, 99))}); kubectl apply -> first line median ${ms(median(created))}`);
  }
  watch.abort();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log([`bench: bare pods, ${new Date().toISOString()}, load average ${load}`, ...results].join('\n'));
});
