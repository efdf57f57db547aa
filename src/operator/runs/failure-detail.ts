import type { Store } from '../../store/store.js';
import type { RunRecord } from '../../store/types.js';

/**
 * A failed run's message as a Run shows it: the script's exit, the step that failed before it with
 * the last line of its stderr (kept with its result), or else the last line the script printed, so
 * `kubectl get runs` tells the story without `spool logs`. `spool run` keeps the seeds' one line
 * ("script exited 1").
 */
export async function failureDetail(store: Store, run: RunRecord): Promise<string | null> {
  if (run.status !== 'failed' || !run.error?.startsWith('script exited')) return run.error;
  const journal = await store.readJournal(run.id);
  const failed = journal.filter((entry) => entry.kind === 'result' && entry.verb === 'step' && Number(entry.data.exitCode ?? 0) !== 0).at(-1);
  const logs = await store.readLogs(run.id);
  const lastLine = lastLineOf(logs.map((line) => line.text).join(''));
  const step = failed ? `step '${failed.name}' exited ${Number(failed.data.exitCode)}` : null;
  const said = lastLineOf(String(failed?.data.stderrTail ?? ''));
  const details = step && said ? [`${step}: ${shortened(said)}`] : [...(step ? [step] : []), ...(lastLine ? [`last output: ${shortened(lastLine)}`] : [])];
  return details.length > 0 ? `${run.error} (${details.join('; ')})` : run.error;
}

function lastLineOf(text: string): string | undefined {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1);
}

const shortened = (line: string): string => (line.length > 200 ? `${line.slice(0, 200)}...` : line);
