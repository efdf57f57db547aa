import { formatDuration } from '../common/duration.js';
import type { RunRecord } from '../store/types.js';
import type { CaseRun } from './run-case.js';
import type { Expectations } from './test-file.js';

/** The outcome a case's run came to: its status, or `waiting` for a run that had not ended. */
export function outcomeOf(run: RunRecord): string {
  return run.status === 'succeeded' || run.status === 'failed' || run.status === 'cancelled' ? run.status : 'waiting';
}

const shown = (value: string | null | undefined): string => (value === null || value === undefined ? 'nothing' : JSON.stringify(value));
const listed = (items: string[]): string => `[${items.join(', ')}]`;

/** Each expectation the case's run does not meet, as one line saying what was expected and what happened. */
export function unmet(expect: Expectations, result: CaseRun): string[] {
  const { run } = result;
  const failures: string[] = [...result.problems];
  const outcome = outcomeOf(run);
  if (expect.outcome !== undefined && outcome !== expect.outcome) {
    const why = outcome === 'waiting' ? ` for ${run.awaiting ?? 'something'}, which the test never delivers` : run.error ? `: ${run.error}` : '';
    failures.push(`expected the run to have ${expect.outcome === 'waiting' ? 'been waiting' : expect.outcome}, but it ${outcome === 'waiting' ? 'was waiting' : outcome}${why}`);
  }
  if (expect.error !== undefined && !(run.error ?? '').includes(expect.error)) {
    failures.push(`expected the run's error to say ${JSON.stringify(expect.error)}, but it was ${shown(run.error)}`);
  }
  for (const [name, value] of Object.entries(expect.outputs ?? {})) {
    if (run.outputs[name] !== value) failures.push(`expected output ${name} to be ${JSON.stringify(value)}, but it was ${shown(run.outputs[name])}`);
  }
  if (expect.steps !== undefined && listed(expect.steps) !== listed(result.steps)) {
    failures.push(`expected the steps ${listed(expect.steps)}, but the run reached ${listed(result.steps)}`);
  }
  for (const [key, value] of Object.entries(expect.state ?? {})) {
    if (result.state[key] !== value) failures.push(`expected the cell ${key} to hold ${JSON.stringify(value)}, but it held ${shown(result.state[key])}`);
  }
  if (expect.timeMs !== undefined && expect.timeMs !== result.virtualMs) {
    failures.push(`expected it to take ${formatDuration(expect.timeMs)} of virtual time, but it took ${formatDuration(result.virtualMs)}`);
  }
  if (expect.runs !== undefined && expect.runs !== result.runs.length) {
    failures.push(`expected ${expect.runs} run${expect.runs === 1 ? '' : 's'}, but the case started ${result.runs.length}`);
  }
  if (expect.log !== undefined && !result.log.includes(expect.log)) failures.push(`expected the log to say ${JSON.stringify(expect.log)}, but it did not`);
  return failures;
}
