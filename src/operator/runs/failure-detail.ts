import type { Store } from '../../store/store.js';
import type { RunRecord } from '../../store/types.js';
import { lastFailedCommand, lastLineOf } from '../../engine/failed-command.js';

/**
 * A failed run's message as a Run shows it: the script's exit, the step or activity that failed
 * before it with the last line of its stderr (kept with its result), or else the last line the script printed, so
 * `kubectl get runs` tells the story without `spool logs`. `spool run` keeps the seeds' one line
 * ("script exited 1").
 */
export async function failureDetail(store: Store, run: RunRecord): Promise<string | null> {
  if (run.status !== 'failed' || !run.error?.startsWith('script exited')) return run.error;
  const failed = lastFailedCommand(await store.readJournal(run.id));
  const step = failed ? `${failed.what} '${failed.name}' exited ${failed.exitCode}` : null;
  if (step && failed?.said) return `${run.error} (${step}: ${shortened(failed.said)})`;
  const lastLine = lastLineOf((await store.readLogs(run.id)).map((line) => line.text).join(''));
  const details = [...(step ? [step] : []), ...(lastLine ? [`last output: ${shortened(lastLine)}`] : [])];
  return details.length > 0 ? `${run.error} (${details.join('; ')})` : run.error;
}

const shortened = (line: string): string => (line.length > 200 ? `${line.slice(0, 200)}...` : line);
