import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry, RunRecord } from '../../src/store/types.js';
import { isAlive, recorded, runIdOf, startSpool, tempDir, type SpoolProcess } from '../support/spool.js';
import { ARTIFACT_LIMIT_BYTES, bashScript } from './bash.js';
import type { Workflow } from './generate.js';
import { pythonScript } from './python.js';
import type { Random } from './random.js';

/** How a workflow is written and run: bash through the native or the Node client, or Python through its SDK. */
export type Form = 'native' | 'node' | 'python';

/** The script's file name (its extension picks the interpreter) and text. */
const scriptOf = (workflow: Workflow, form: Form): [string, string] =>
  form === 'python' ? ['wf.py', pythonScript(workflow)] : ['wf.sh', bashScript(workflow)];

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
  faults: string[];
  output: string;
}

interface CaseDir {
  dir: string;
  out: string;
  env: Record<string, string>;
}

/** A directory for one run: the script, its data files, the bundle, and where the script writes what it saw. */
function prepare(workflow: Workflow, form: Form, script: [string, string]): CaseDir {
  const dir = tempDir('spool-verify-');
  const data = join(dir, 'data-files');
  const out = join(dir, 'seen');
  mkdirSync(data);
  mkdirSync(out);
  mkdirSync(join(dir, 'bundle'));
  for (const op of workflow.ops) if ('payload' in op) writeFileSync(join(data, op.id), op.payload);
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
    },
  };
}

/** Every process of this case (the runner, its scripts and their children), found by its environment. */
function processesOf(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(`VERIFY_CASE=${dir}\0`)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A lost node: the runner (the agent), its scripts and their children, all at once, unwarned. */
function killAll(dir: string): void {
  for (const pid of processesOf(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/**
 * Runs the workflow with `spool run --fresh-dir` (each pass in a new, empty directory, as a pod),
 * and with `faults` kills everything at random moments and carries on with `spool resume`.
 */
export async function runWorkflow(workflow: Workflow, form: Form, faults: Random | null): Promise<History> {
  const script = scriptOf(workflow, form);
  const { dir, out, env } = prepare(workflow, form, script);
  const dataDir = join(dir, 'store');
  const label = `${form === 'python' ? 'Python SDK' : `${form} client`}, ${faults ? 'with faults' : 'uninterrupted'}`;
  const snapshots: JournalEntry[][] = [];
  const faultLog: string[] = [];
  let output = '';
  let runner: SpoolProcess = startSpool(['run', script[0], '--fresh-dir', '--with', 'bundle', '--data-dir', dataDir], { cwd: dir, env });
  // Faults start once the run is recorded (its id printed): a runner killed before that left nothing to resume.
  await until(() => /^ {2}run: /m.test(runner.output()) || !isAlive(runner.pid), 60_000);
  let runId: string | null = null;
  const count = faults ? faults.int(1, 2) : 0;
  for (let fault = 0; faults && fault < count; fault += 1) {
    const after = faults.int(200, 3000);
    const ended = await until(() => !isAlive(runner.pid), after);
    if (ended) break;
    runId ??= runIdOf(runner.output());
    // Again until none is left: the runner may start a pass's script between a look and the kill.
    await until(() => {
      killAll(dir);
      return processesOf(dir).length === 0;
    }, 10_000);
    await runner.done;
    output += runner.output();
    faultLog.push(`killed after ${after} ms`);
    snapshots.push((await recorded(dataDir, runId)).journal);
    runner = startSpool(['resume', runId, '--fresh-dir', '--data-dir', dataDir], { cwd: dir, env });
  }
  const finished = await Promise.race([runner.done, new Promise<null>((resolve) => setTimeout(() => resolve(null), 150_000))]);
  if (!finished) killAll(dir);
  output += runner.output();
  runId ??= runIdOf(output);
  const { run, journal } = await recorded(dataDir, runId);
  return { label, run, journal, snapshots, seen: seenBy(out), executions: executionsIn(env.VERIFY_COUNT ?? ''), faults: faultLog, output };
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
