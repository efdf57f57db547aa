import { RERUN_FROM_VERBS } from '../api/rerun-from.js';
import { TerminalError } from '../common/errors.js';
import type { Store } from '../store/store.js';
import type { JournalEntry, RunRecord, ScriptSource } from '../store/types.js';
import { submitRun, type Admitted, type Submission } from './admission.js';


export interface Rerun {
  /** The step to rerun from: the journal before its first call is copied; null reruns from the top. */
  fromStep: string | null;
  /** The definition of the new run: the old run's own, or the latest (`--latest`). */
  source: ScriptSource;
  input: unknown;
  /** The new run's admission, as a submit's: its id, environment, concurrency. */
  admission: Pick<Submission, 'env' | 'runId' | 'concurrency'>;
}

// Terminal: the operator fails a Run it cannot admit rather than retry it; the API answers a 400 with the code.
const refuse = (code: string, message: string): TerminalError => new TerminalError('usage', message, { code });

/** What the start of a rerun is found from: the old run's id and script, and its journal's calls. */
type Source = Pick<RunRecord, 'id' | 'script'>;
type Call = Pick<JournalEntry, 'position' | 'kind' | 'verb' | 'name'>;

/**
 * Starts a new run of `old`'s definition (docs/testing-workflows.md, `spool rerun`). From a step,
 * the new run's journal starts with the old run's entries before that step's first call, copied
 * in the same transaction that makes the run, so its first pass replays them (their recorded
 * results, the old steps' idempotency keys in their stdout) and runs the step and everything after
 * fresh: their keys are made from the new run's id (common/ids.ts), so they differ.
 */
export async function rerunRun(store: Store, old: RunRecord, rerun: Rerun, now: Date): Promise<Admitted> {
  const journal = rerun.fromStep === null ? [] : await store.readJournal(old.id);
  const before = rerun.fromStep === null ? 0 : rerunStart(old, journal, rerun.fromStep);
  const prefix = journal.filter((entry) => entry.position < before);
  return submitRun(
    store,
    {
      ...rerun.admission,
      project: old.project,
      source: { ...rerun.source, runner: rerun.source.runner ?? old.runner },
      input: rerun.input,
      lenient: old.lenient,
      subject: old.subject,
      rerunOf: { runId: old.id, fromStep: rerun.fromStep },
      prefix: { before, outputs: outputsOf(prefix) },
    },
    now,
  );
}

/**
 * The position of the step's first call in the old run's journal; a step it never reached is
 * refused. The CLI asks it too before it makes a Run on a cluster, so a bad step makes nothing.
 */
export function rerunStart(old: Source, journal: Call[], fromStep: string): number {
  const calls = journal.filter((entry) => entry.kind === 'call');
  const first = calls.find((entry) => RERUN_FROM_VERBS.includes(entry.verb) && entry.name === fromStep);
  if (!first) {
    const steps = [...new Set(calls.filter((entry) => RERUN_FROM_VERBS.includes(entry.verb)).map((entry) => entry.name))];
    const reached = steps.length > 0 ? `it reached ${steps.join(', ')}` : 'it reached no step';
    // The script names it but the run never got there (it failed or waits before it), or no such step.
    if (mentions(old.script, fromStep)) throw refuse('step_not_reached', `step '${fromStep}' never ran in ${old.id}: ${reached}`);
    throw refuse('unknown_step', `${old.id} has no step '${fromStep}': ${reached}`);
  }
  // The lease a bare `spool lock` took is the old run's: the new run would go on without holding it.
  const lock = calls.find((entry) => entry.verb === 'lock' && entry.position < first.position);
  if (lock) {
    throw refuse(
      'lock_before_step',
      `${old.id} took the lock '${lock.name}' (call ${lock.position + 1}) before step '${fromStep}', and a rerun from there would not hold it: rerun from an earlier step or from the top`,
    );
  }
  return first.position;
}

function mentions(script: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w-])${escaped}($|[^\\w-])`).test(script);
}

/** The outputs the copied `spool output set` calls set: the run's outputs are kept beside its journal. */
function outputsOf(prefix: JournalEntry[]): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const entry of prefix) if (entry.kind === 'call' && entry.verb === 'output.set') outputs[entry.name] = String(entry.data.value ?? '');
  return outputs;
}
