import { Pass, type PassHost } from '../engine/pass.js';
import type { RunOutcome } from '../engine/settle.js';
import { GRAPH, runsInProcess } from '../common/workflow-file.js';
import type { Store } from '../store/store.js';
import type { ClaimedPass, RunRecord } from '../store/types.js';
import { runPass, type ScriptOutput } from './local-pass.js';

/** Where one pass's stdout and stderr go: this process's own, or descriptors closed after the pass. */
export interface PassOutput extends ScriptOutput {
  close?(): Promise<void>;
}

/**
 * Runs one script pass of a run somewhere else and answers how it ended: on a cluster, a Job
 * (passes/cluster/kube-passes.ts).
 */
export type PassRunner = (run: RunRecord, host: PassHost, signal: AbortSignal) => Promise<RunOutcome>;

/** Where this process puts the passes it starts, and how it runs the ones it keeps. */
export interface PassPlace {
  /** The pass's output, opened for a pass run in this process. */
  output(run: RunRecord): PassOutput;
  /** Where scripts run when not here: unset, a script is a child process of this one. */
  elsewhere?: PassRunner;
  lenient?: boolean;
  /** Each script pass in a new, empty working directory, as on a cluster (PassOptions.freshDir). */
  freshDir?: boolean;
}

/**
 * Starts one pass of a run whose pass the store has begun (store.startPass) and answers how it
 * ended. The one place that says where a pass runs, locally and on a cluster: a pipeline's or a
 * graph's coordinator always in this process (it only makes durable calls); a script where the
 * place puts it (a Job), else as a child process here, served by its agent's socket.
 */
export async function startPass(
  store: Store,
  claimed: ClaimedPass,
  host: PassHost,
  place: PassPlace,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { run, journal } = claimed;
  if (!runsInProcess(run) && place.elsewhere) return place.elsewhere(run, host, signal);
  const output = place.output(run);
  try {
    const pass = await Pass.start(store, run, host, place.lenient, journal);
    if (!runsInProcess(run)) return await runPass(store, run, host, { output, signal, pass, ...(place.freshDir ? { freshDir: true } : {}) });
    // Loaded for a document's pass only: a script's pass has no use for them or for the YAML
    // parser they bring, and every `spool run` of a script loaded them (about 100 ms).
    const runDocument = run.interpreter === GRAPH ? (await import('../graph/runner.js')).runGraphPass : (await import('../pipeline/coordinator.js')).runPipelinePass;
    return await runDocument(store, run, host, { output: output.stdout, pass });
  } finally {
    await output.close?.();
  }
}
