// Many Runs parked on the node at once, and what they leave behind: shared by test/e2e/scale.e2e.ts
// (a bounded count, checked for correctness) and bench/cluster/sleepers.bench.ts (1,000, measured).
//
// Two ways to park them, both with no pod and nothing in the operator's memory but their Run:
//   - a timer (the bench): each Run's script works out, in a step, how long to sleep so that every
//     Run wakes at the same moment (WAKE, seconds since the epoch, written into the Workflow). The
//     step's result is recorded, so a replayed pass sleeps the same duration as the first (a sleep
//     of another length would diverge from the journal). A run whose first pass comes after WAKE
//     (a slow node) still sleeps a second.
//   - an event (the e2e test): each waits for `sleepers.wake`, and one `spool event emit` wakes them
//     all at the moment the test chooses, however long the node took to park them.
// After waking, a step prints the moment it starts and ends (bash's $EPOCHREALTIME; the node is this
// machine, one clock), so how many passes ran at once is counted afterwards from what the passes
// themselves did.
import { spawn } from 'node:child_process';
import pg from 'pg';
import { eventually, leaderPod, SYSTEM, type Cluster } from './cluster.js';

export const SLEEPER_WORKFLOW = 'sleeper';

/** The event that wakes runs parked by `{ event: true }`. */
export const WAKE_EVENT = 'sleepers.wake';

/** How the runs are parked: until a moment (epoch seconds), or until WAKE_EVENT. */
export type Park = { wakeAt: number } | { event: true };

const WORK = "spool step work -- bash -c 'echo $EPOCHREALTIME; sleep 2; echo $EPOCHREALTIME'";

/** The Workflow's script. */
export function sleeperScript(park: Park): string {
  const parked =
    'wakeAt' in park
      ? [
          `secs=$(spool step plan -- bash -c 'echo $(( ${park.wakeAt} - $(date +%s) ))')`,
          // A run whose first pass came after WAKE still sleeps (a sleep of 0 is refused).
          '[ "$secs" -ge 1 ] || secs=1',
          'spool sleep "${secs}s"',
        ]
      : [`spool wait event ${WAKE_EVENT}`];
  return [...parked, WORK, ''].join('\n');
}

/** The calls each run's journal holds once it has finished, in order. */
export function sleeperCalls(park: Park): string[] {
  return 'wakeAt' in park ? ['step plan', 'sleep', 'step work'] : [`wait.event ${WAKE_EVENT}`, 'step work'];
}

/** The Workflow (with these extra spec fields) and `count` Runs of it (sleeper-1..count) in the namespace, applied in chunks. */
export async function createSleepers(cluster: Cluster, namespace: string, count: number, park: Park, spec: object = {}): Promise<void> {
  await cluster.apply({
    apiVersion: 'hyperspool.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name: SLEEPER_WORKFLOW, namespace },
    spec: { filename: 'sleeper.sh', script: sleeperScript(park), ...spec },
  });
  const runs = Array.from({ length: count }, (_, i) => ({
    apiVersion: 'hyperspool.dev/v1alpha1',
    kind: 'Run',
    metadata: { name: `${SLEEPER_WORKFLOW}-${i + 1}`, namespace },
    spec: { workflowRef: { name: SLEEPER_WORKFLOW } },
  }));
  for (let i = 0; i < runs.length; i += 250) await cluster.apply(...runs.slice(i, i + 250));
}

export interface RunResource {
  metadata: { name: string; namespace: string };
  status?: { phase?: string; passes?: number; message?: string } & Record<string, unknown>;
}

/** The Runs of a namespace as the API server has them. */
export async function runsIn(cluster: Cluster, namespace: string): Promise<RunResource[]> {
  return (await cluster.getJson<{ items: RunResource[] }>('-n', namespace, 'runs')).items;
}

/** How many Runs of these are in each phase ('' for none yet). */
export function phaseCounts(runs: RunResource[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const run of runs) counts[run.status?.phase ?? ''] = (counts[run.status?.phase ?? ''] ?? 0) + 1;
  return counts;
}

/** Pass pods of the namespace that still exist (any phase): a sleeping run should have none. */
export async function passPods(cluster: Cluster, namespace: string): Promise<string[]> {
  const pods = await cluster.getJson<{ items: { metadata: { name: string } }[] }>('-n', namespace, 'pods', '-l', 'hyperspool.dev/pass');
  return pods.items.map((pod) => pod.metadata.name);
}

/** The most intervals that overlap at one moment. */
export function mostAtOnce(intervals: readonly (readonly [number, number])[]): number {
  // Ends before starts at the same moment: one pass ending as the next starts is not two at once.
  const edges = intervals.flatMap(([start, end]) => [[start, 1] as const, [end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, change] of edges) most = Math.max(most, (now += change));
  return most;
}

/** The value at fraction q (0..1) of sorted numbers, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN);
}

/** A metric's samples from Prometheus text: labels as written (`resource="pods"`) to value. */
export function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)/.exec(line);
    if (match?.[1] === name) found.set(match[2] ?? '', Number(match[3]));
  }
  return found;
}

/** The operator's metrics port (config/manager/deployment.yaml). */
const METRICS_PORT = 9464;

/** A replica's /metrics, through the API server's proxy to its pod (no port-forward, no Service). */
export async function podMetrics(cluster: Cluster, pod: string): Promise<string> {
  // The port by number: the API server's pod proxy answers a port's name with a reset stream.
  return cluster.kubectl('get', '--raw', `/api/v1/namespaces/${SYSTEM}/pods/${pod}:${METRICS_PORT}/proxy/metrics`);
}

/** The leading replica's /metrics; asked again while the Lease still names a replica a rollout just replaced. */
export function leaderMetrics(cluster: Cluster): Promise<string> {
  return eventually("the leader's /metrics", async () => podMetrics(cluster, await leaderPod(cluster)), 30_000);
}

/**
 * A client of the install's PostgreSQL through `kubectl port-forward` (the database is reachable
 * only from the operator's pods), to read what the runs recorded: the journal is the ground truth
 * of "recorded once", and one query answers for a thousand runs where `spool journal` takes one
 * process each.
 */
export async function openJournalDatabase(cluster: Cluster): Promise<{ db: pg.Client; close(): Promise<void> }> {
  // kustomize's secretGenerator names it hyperspool-db-<hash>.
  const secrets = await cluster.getJson<{ items: { metadata: { name: string }; data?: { url?: string } }[] }>('-n', SYSTEM, 'secrets');
  const secret = secrets.items.find((each) => /^hyperspool-db(-[a-z0-9]+)?$/.test(each.metadata.name) && each.data?.url);
  if (!secret?.data?.url) throw new Error(`no hyperspool-db Secret with a url in ${SYSTEM}`);
  const url = new URL(Buffer.from(secret.data.url, 'base64').toString('utf8'));
  const kubectl = process.env.KUBECTL ?? 'kubectl';
  const forward = spawn(kubectl, ['--kubeconfig', cluster.kubeconfig, '-n', SYSTEM, 'port-forward', 'svc/hyperspool-postgres', ':5432'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kubectl port-forward said nothing useful: ${said}`)), 30_000);
    forward.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      const match = /127\.0\.0\.1:(\d+) ->/.exec(said);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    forward.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    forward.on('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}: ${said}`)));
  });
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  return {
    db,
    close: async () => {
      await db.end().catch(() => undefined);
      forward.kill();
    },
  };
}

export interface Recorded {
  /** Runs of the namespace in the store, by status. */
  statuses: Record<string, number>;
  /** Calls recorded more than once in a run's journal: "run verb name × n". */
  repeated: string[];
  /** Runs whose journal's calls are not the script's, in order. */
  incomplete: string[];
  /** The work step of each run: when it started and ended (epoch seconds), as it printed them. */
  work: [number, number][];
  /** Passes per run, as the store counted them. */
  passes: number[];
}

/** What the runs of a namespace recorded, as the store has it: each run's status, passes and calls in order. */
export interface Journals {
  /** Runs of the namespace in the store, by status. */
  statuses: Record<string, number>;
  runs: { id: string; status: string; passes: number }[];
  /** Each run's calls ("verb name"), in the order its journal holds them. */
  calls: Map<string, string[]>;
  /** Calls recorded more than once in a run's journal: "run verb name × n". */
  repeated: string[];
}

/** Each run's journal in a namespace, read from the store in two queries however many runs. */
export async function journalsIn(db: pg.Client, namespace: string): Promise<Journals> {
  const runs = await db.query<{ id: string; status: string; passes: number }>('select id, status, passes from runs where project = $1', [namespace]);
  const rows = await db.query<{ run_id: string; verb: string; name: string }>(
    `select j.run_id, j.verb, j.name from journal j join runs r on r.id = j.run_id
      where r.project = $1 and j.kind = 'call' order by j.run_id, j.position`,
    [namespace],
  );
  const statuses: Record<string, number> = {};
  for (const run of runs.rows) statuses[run.status] = (statuses[run.status] ?? 0) + 1;
  const calls = new Map<string, string[]>(runs.rows.map((run) => [run.id, []]));
  for (const row of rows.rows) calls.set(row.run_id, [...(calls.get(row.run_id) ?? []), `${row.verb} ${row.name}`.trim()]);
  const repeated: string[] = [];
  for (const [id, entries] of calls)
    for (const call of new Set(entries)) if (entries.filter((entry) => entry === call).length > 1) repeated.push(`${id} ${call} × ${entries.filter((entry) => entry === call).length}`);
  return { statuses, runs: runs.rows, calls, repeated };
}

/** The runs whose journal's calls are not `expected`, in order: "run: calls". */
export function incompleteJournals(journals: Journals, expected: readonly string[]): string[] {
  return [...journals.calls].filter(([, calls]) => calls.join(', ') !== expected.join(', ')).map(([id, calls]) => `${id}: ${calls.join(', ')}`);
}

/** What the runs of a namespace (the sleepers' own) recorded, read from the store. */
export async function recorded(db: pg.Client, namespace: string, park: Park): Promise<Recorded> {
  const journals = await journalsIn(db, namespace);
  const results = await db.query<{ data: Record<string, unknown> }>(
    `select j.data from journal j join runs r on r.id = j.run_id
      where r.project = $1 and j.kind = 'result' and j.verb = 'step' and j.name = 'work'`,
    [namespace],
  );
  const work = results.rows.map((row) => {
    const [start, end] = String(row.data.stdout ?? '').trim().split('\n').map(Number);
    return [start ?? NaN, end ?? NaN] as [number, number];
  });
  return {
    statuses: journals.statuses,
    repeated: journals.repeated,
    incomplete: incompleteJournals(journals, sleeperCalls(park)),
    work,
    passes: journals.runs.map((run) => run.passes),
  };
}
