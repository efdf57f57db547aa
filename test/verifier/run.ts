import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry, RunRecord } from '../../src/store/types.js';
import { startKeyServer, type Received } from '../graph/key-server.js';
import { recorded, spool, tempDir, withStore } from '../support/spool.js';
import { ARTIFACT_LIMIT_BYTES, bashScript } from './bash.js';
import { CHILD_GRAPH, type Workflow } from './generate.js';
import { awaitingOf, isAnswered } from './deliveries.js';
import { devServer, hostFor, killedAlone, type Killed } from './hosts.js';
import { killAll, launcherProcessOf, scriptProcessOf } from './processes.js';
import { pythonScript } from './python.js';
import { entryKey } from './check.js';
import type { Random } from './random.js';

/** How a workflow is written and run: bash through the native or the Node client, or Python through its SDK. */
export type Form = 'native' | 'node' | 'python';

/** The script's file name (its extension picks the interpreter) and text. */
const scriptOf = (workflow: Workflow, form: Form): [string, string] =>
  form === 'python' ? ['wf.py', pythonScript(workflow)] : ['wf.sh', bashScript(workflow)];

type KeyServer = Awaited<ReturnType<typeof startKeyServer>>;

/** Everything one run of a workflow did and saw: the history the invariants are checked on. */
export interface History {
  label: string;
  run: RunRecord | null;
  journal: JournalEntry[];
  /** The journal as it stood after each fault, before the run was resumed. */
  snapshots: JournalEntry[][];
  /** What each op's call gave the script, by pass: `{ o3: { 1: bytes, 2: bytes } }`. */
  seen: Map<string, Map<number, { bytes: Buffer | null; code: number | null }>>;
  /** How many times each body ran (steps, locked sections, activities, the steps that make files). */
  executions: Map<string, number>;
  /** The requests the key server got (call-node ops post to `/<id>`). */
  requests: Received[];
  faults: string[];
  /** Whether a fault killed the script alone, its runner left alive. */
  scriptKilled: boolean;
  /** `spool resume` of a run that failed so, on the runner's store: its exit code and output. */
  resumed: { code: number | null; output: string } | null;
  /**
   * A person's `spool cancel` of the run (the `cancel` faults): what it printed, and the journal's
   * entries (`position/kind`) and the bodies run, as they stood once it answered.
   */
  cancel: { output: string; journal: string[]; executions: Map<string, number> } | null;
  /** The lock groups whose lease queue still holds the run once it ended. */
  leasesHeld: string[];
  output: string;
}

interface CaseDir {
  dir: string;
  out: string;
  env: Record<string, string>;
}

/** A directory for one run: the script, its data files, the bundle, and where the script writes what it saw. */
function prepare(workflow: Workflow, form: Form, script: [string, string], http: string): CaseDir {
  const dir = tempDir('spool-verify-');
  const data = join(dir, 'data-files');
  const out = join(dir, 'seen');
  mkdirSync(data);
  mkdirSync(out);
  mkdirSync(join(dir, 'bundle'));
  mkdirSync(join(dir, 'tmp'));
  for (const op of workflow.ops) if ('payload' in op && Buffer.isBuffer(op.payload)) writeFileSync(join(data, op.id), op.payload);
  for (const op of workflow.ops) if (op.kind === 'call-graph') writeFileSync(join(data, `${op.id}.yaml`), CHILD_GRAPH);
  writeFileSync(join(dir, 'bundle', 'co.bin'), workflow.checkoutFile);
  writeFileSync(join(dir, script[0]), script[1]);
  return {
    dir,
    out,
    env: {
      // The Python form's `spool` subprocesses (the verbs its SDK lacks) use the native client.
      SPOOL_CLIENT: form === 'python' ? 'native' : form,
      SPOOL_MAX_ARTIFACT_BYTES: String(ARTIFACT_LIMIT_BYTES),
      VERIFY_CASE: dir,
      VERIFY_OUT: out,
      VERIFY_DATA: data,
      VERIFY_COUNT: join(dir, 'count'),
      VERIFY_HTTP: http,
      // The passes' new directories and agent sockets: a killed pass leaves its own behind, removed with the case.
      TMPDIR: join(dir, 'tmp'),
    },
  };
}

/**
 * Runs the workflow with each pass in a new, empty directory (as a pod): by `spool run`, or with
 * `faults` on `killed`'s host, where everything is killed at random moments and the run carried on
 * (`spool resume`, or `spool dev` started again). The signals and events its waits take are sent
 * from outside, as a user would (deliveries.ts); they need a server, so such a workflow runs
 * uninterrupted on `spool dev`, and a runner killed with deliveries to make is carried on by
 * `spool dev` on its data dir, as `spool run` tells its user.
 */
export async function runWorkflow(workflow: Workflow, form: Form, faults: Random | null, killed: Killed = 'runner'): Promise<History> {
  // call-node ops post to it; one per run, so each history counts its own requests.
  const keys = await startKeyServer();
  try {
    return await runOnce(workflow, form, faults, killed, keys);
  } finally {
    await keys.close();
  }
}

async function runOnce(workflow: Workflow, form: Form, faults: Random | null, killed: Killed, keys: KeyServer): Promise<History> {
  const script = scriptOf(workflow, form);
  const { dir, out, env } = prepare(workflow, form, script, keys.url);
  const dataDir = join(dir, 'store');
  const files = { dir, dataDir, script: script[0], env };
  const answered = workflow.ops.filter(isAnswered);
  let host = hostFor(faults ? killed : 'runner', answered.length > 0)(files);
  const on = host.takesDeliveries ? 'spool dev' : 'spool run';
  const faulted = !faults ? `uninterrupted, on ${on}` : killed === 'cancel' ? `cancelled on ${on}` : killedAlone(killed) ? `killing the ${killed} alone, on ${on}` : `killing ${host.what}`;
  const label = `${form === 'python' ? 'Python SDK' : `bash, ${form} client`}, ${faulted}`;
  const snapshots: JournalEntry[][] = [];
  const faultLog: string[] = [];
  // Faults start once the run is recorded (its id known): a kill before that left nothing to carry on.
  const runId = await host.start();
  const fault = async (why: string): Promise<void> => {
    await killAll(dir);
    faultLog.push(`killed ${host.what} ${why}`);
    await host.lost();
    snapshots.push((await recorded(dataDir, runId)).journal);
    if (answered.length && !host.takesDeliveries) {
      const server = devServer(files);
      await server.adopt(runId);
      host = server;
      faultLog.push('carried on by spool dev, for its signals and events');
    } else await host.restart(runId);
  };
  // The script alone: one kill, the script of whichever pass runs then; the run is not carried on (what becomes of it is checked).
  // The launcher alone: one kill, and the script it started goes with it; the runner carries the run on.
  let aloneKillAt = faults && killedAlone(killed) ? Date.now() + faults.int(200, 3000) : Infinity;
  let kills = faults && !killedAlone(killed) && killed !== 'cancel' ? faults.int(1, 2) : 0;
  // The cancel: once, at a random moment (the run may have ended by then: nothing to cancel).
  let cancelAt = faults && killed === 'cancel' ? Date.now() + faults.int(200, 3000) : Infinity;
  let cancel: History['cancel'] = null;
  let after = faults ? faults.int(200, 3000) : 0;
  let killAt = Date.now() + after;
  while (!(await host.ended())) {
    if (Date.now() >= cancelAt) {
      const late = Date.now() - cancelAt;
      cancelAt = Infinity;
      const { output, journal } = await host.cancel(runId);
      cancel = { output, journal: journal.map(entryKey), executions: executionsIn(env.VERIFY_COUNT ?? '') };
      faultLog.push(`spool cancel (${late} ms late): ${output.trim()}`);
      continue;
    }
    const alone = Date.now() >= aloneKillAt ? (killed === 'script' ? scriptProcessOf(dir) : launcherProcessOf(dir)) : null;
    if (alone !== null) {
      aloneKillAt = Infinity;
      try {
        process.kill(alone, 'SIGKILL');
        faultLog.push(`killed the ${killed} (pid ${alone}), its runner left alive`);
      } catch {
        aloneKillAt = Date.now(); // it ended meanwhile: the next one
      }
      continue;
    }
    if (faults && kills > 0 && Date.now() >= killAt) {
      await fault(`after ${after} ms`);
      kills -= 1;
      after = faults.int(200, 3000);
      killAt = Date.now() + after;
      continue;
    }
    if (answered.length && !host.takesDeliveries) {
      // The runner takes none: it is killed (at the planned moment, or now when none is left) and spool dev carries on.
      if (kills === 0) await fault('to deliver');
    } else if (answered.length) {
      const next = answered.find((op) => op.kind === 'wait-signal' && op.when === 'before') ?? answered[0];
      if (next && ((next.kind === 'wait-signal' && next.when === 'before') || (await host.awaiting()) === awaitingOf(next))) {
        // Not when the faults kill the script or the launcher alone (then only that is killed, once), nor when they cancel.
        if (faults && !killedAlone(killed) && killed !== 'cancel' && next.when === 'across-kill') await fault(`while it waits for ${awaitingOf(next)}`);
        await host.deliver(next, 'payload');
        if (next.kind === 'wait-signal') await host.deliver(next, 'second');
        answered.splice(answered.indexOf(next), 1);
        continue;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, answered.length ? 100 : 50));
  }
  await host.finish(150_000);
  const { run, journal, leasesHeld } = await withStore(dataDir, async (store) => {
    const ended = await store.getRun(runId);
    const groups = workflow.ops.filter((op) => op.kind === 'lock').map((op) => `${op.id}-group`);
    const held: string[] = [];
    for (const group of groups) if (ended && (await store.leaseQueue(ended.project, group)).includes(runId)) held.push(group);
    return { run: ended, journal: await store.readJournal(runId), leasesHeld: held };
  });
  // What a user would try next on a run whose script was killed: resume it.
  const resumed = killed === 'script' && faults && !host.takesDeliveries && run?.status === 'failed' ? await spool(['resume', runId, '--data-dir', dataDir], { cwd: dir, env }) : null;
  return {
    label,
    run,
    journal,
    snapshots,
    seen: seenBy(out),
    executions: executionsIn(env.VERIFY_COUNT ?? ''),
    requests: [...keys.received],
    faults: faultLog,
    scriptKilled: faultLog.some((line) => line.startsWith('killed the script')),
    resumed: resumed && { code: resumed.code, output: resumed.output },
    cancel,
    leasesHeld,
    output: host.output(),
  };
}

function seenBy(out: string): History['seen'] {
  const seen: History['seen'] = new Map();
  for (const name of readdirSync(out)) {
    const match = /^(.+)\.(\d+)(\.code)?$/.exec(name);
    if (!match?.[1] || !match[2]) continue;
    const byPass = seen.get(match[1]) ?? new Map<number, { bytes: Buffer | null; code: number | null }>();
    seen.set(match[1], byPass);
    const pass = byPass.get(Number(match[2])) ?? { bytes: null, code: null };
    byPass.set(Number(match[2]), pass);
    const content = readFileSync(join(out, name));
    if (match[3]) pass.code = Number(content.toString().trim());
    else pass.bytes = content;
  }
  return seen;
}

function executionsIn(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const id = line.split(' ')[0];
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
