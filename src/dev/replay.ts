import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { JournalEntry, RunWithScript } from '../api/responses.js';
import { runPass } from '../passes/local-pass.js';
import { UsageError } from '../common/errors.js';
import { GRAPH, runsInProcess } from '../common/workflow-file.js';
import { journalFromView } from '../engine/journal-view.js';
import { maxValueBytes } from '../engine/limits.js';
import type { PassHost } from '../engine/pass.js';
import { ReplayPass, type CallName } from '../engine/replay-pass.js';
import { runGraphPass } from '../graph/runner.js';
import { runPipelinePass } from '../pipeline/coordinator.js';
import { openPgliteStore } from '../store/pglite.js';
import { readWorkflowFile } from '../workflow-file/check.js';

export interface ReplayOptions {
  /** The script to replay; by default the run's workflow file as it is now. */
  script?: string;
  lenient?: boolean;
}

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const named = (call: CallName): string => (call.name ? `\`${call.verb} ${call.name}\`` : `\`${call.verb}\``);
const at = (where: string | null): string => (where ? ` (${where})` : '');
const calls = (count: number): string => `${count} call${count === 1 ? '' : 's'}`;

/**
 * `spool replay RUN` (docs/testing-workflows.md): the script against a copy of the run's journal in
 * an in-memory store, as a pass of the run in a new, empty directory, answered by a ReplayPass, which
 * ends it at the first call the journal does not answer. Nothing is executed and nothing outside
 * this process is written. Exit 0 when the script reaches the end of the journal, 1 where it diverges.
 */
export async function replayRun(recorded: RunWithScript, journal: JournalEntry[], options: ReplayOptions): Promise<number> {
  const file = scriptFile(recorded, options.script);
  const { script, interpreter } = readWorkflowFile(file);
  // A document's coordinator names its children after the run's workflow as it was submitted
  // (`pipe.yaml#build`), so the copy keeps that name; a script keeps its file, where its lines are shown.
  const workflow = runsInProcess({ interpreter }) ? recorded.workflow : file;
  const store = await openPgliteStore();
  const work = mkdtempSync(join(tmpdir(), 'spool-replay-'));
  try {
    await store.createRun({
      id: recorded.id,
      project: recorded.project,
      workflow,
      interpreter,
      script,
      input: recorded.input,
      lenient: recorded.lenient,
      cwd: process.cwd(),
    });
    for (const entry of journalFromView(journal)) await store.appendJournal(entry);
    const run = await store.getRun(recorded.id);
    if (!run) throw new Error(`the replay's copy of ${recorded.id} is gone`);
    const host: PassHost = {
      now: () => new Date(),
      capabilities: [],
      noActivities: 'a replay runs nothing the journal does not answer',
      maxResultBytes: maxValueBytes(),
      env: 'replay',
      notify: () => undefined,
    };
    const pass = await ReplayPass.open(store, run, host, options.lenient === true || recorded.lenient);
    // The script's own output goes to stderr; stdout is the verdict.
    let exit: string;
    if (runsInProcess(run)) {
      const runDocument = run.interpreter === GRAPH ? runGraphPass : runPipelinePass;
      const outcome = await runDocument(store, run, host, { output: 2, pass });
      exit = outcome.kind;
    } else {
      const lineFile = join(work, 'line');
      pass.where = () => scriptLine(lineFile);
      const env = interpreter.startsWith('bash') ? bashLineEnv(work, lineFile) : {};
      const outcome = await runPass(store, run, host, { output: { stdout: 2, stderr: 2 }, freshDir: true, pass, env });
      exit = outcome.kind === 'failed' ? outcome.message : outcome.kind;
    }
    return verdict(pass, exit);
  } finally {
    await store.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The given file, else the run's workflow file where it is now: here, or in the directory it was submitted from. */
function scriptFile(run: RunWithScript, given: string | undefined): string {
  if (given !== undefined) return resolve(given);
  const candidates = [resolve(run.workflow), ...(run.cwd ? [resolve(run.cwd, run.workflow)] : [])];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new UsageError(`the script of ${run.id}, ${run.workflow}, is not here: pass --script FILE`);
  return found;
}

function verdict(pass: ReplayPass, exit: string): number {
  for (const call of pass.lenientAnswers.values()) {
    out(
      `call ${call.position + 1}${at(call.where)}: the journal recorded ${named(call.recorded)} there, but the script reached ` +
        `${named(call.reached)}; a lenient replay answers it with the recorded result`,
    );
  }
  const { divergence, stop } = pass;
  if (divergence) {
    out(
      `diverges at call ${divergence.position + 1}${at(divergence.where)}: the journal recorded ${named(divergence.recorded)} there, ` +
        `but the script reached ${named(divergence.reached)} (a pass of this run would fail with a determinism error; --lenient shows what a lenient replay would do)`,
    );
    return 1;
  }
  // The calls the script reached that the journal records: a call with no result yet among them.
  const reached = stop ? stop.position + (stop.position < pass.recordedCalls ? 1 : 0) : pass.nextPosition;
  // The journal's last call may have no result (the run waits on it, or a step was under way): a
  // replay that stops there has reached the end of the journal too.
  const short = reached < pass.recordedCalls;
  if (short) {
    out(`diverges at call ${reached + 1}: the journal recorded ${calls(pass.recordedCalls)}, but the script ended (${exit}) after ${reached}`);
    return 1;
  }
  const how = pass.lenientAnswers.size > 0 ? `replays leniently: ${calls(reached)}, ${pass.lenientAnswers.size} of them not the call recorded` : `replays cleanly: ${calls(reached)}`;
  const then = !stop
    ? `; then the script ended (${exit})`
    : stop.position < pass.recordedCalls
      ? `; the run has no result for the last, ${named(stop)}, yet`
      : `; the script goes on to a new call, ${named(stop)}${at(stop.where)}, which a replay does not run`;
  out(how + then);
  return 0;
}

/**
 * Where a bash script is: BASH_ENV, which bash reads before the script, sets a DEBUG trap (inherited
 * by functions and subshells: functrace) that writes the file and line of each command it runs to a
 * file, so the line of a `spool` call is there while the agent answers it. Nothing else is changed.
 */
function bashLineEnv(dir: string, lineFile: string): Record<string, string> {
  const file = join(dir, 'bash-env');
  const previous = process.env.BASH_ENV ? `. ${JSON.stringify(process.env.BASH_ENV)}\n` : '';
  writeFileSync(
    file,
    `${previous}set -o functrace\ntrap 'printf "%s:%s\\n" "\${BASH_SOURCE[0]:-}" "$LINENO" >${JSON.stringify(lineFile)} 2>/dev/null || :' DEBUG\n`,
  );
  return { BASH_ENV: file };
}

function scriptLine(lineFile: string): string | null {
  let text: string;
  try {
    text = readFileSync(lineFile, 'utf8').trim();
  } catch {
    return null;
  }
  const split = text.lastIndexOf(':');
  if (split <= 0) return null;
  const path = text.slice(0, split);
  const shown = relative(process.cwd(), path);
  return `${shown.startsWith('..') || isAbsolute(shown) ? path : shown}:${text.slice(split + 1)}`;
}
