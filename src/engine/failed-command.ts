/** A journal entry as the store and the API both give it. */
interface Entry {
  kind: string;
  verb: string;
  name: string;
  data: Record<string, unknown>;
}

/** The calls whose result is a command's that may fail: a step's, and an activity's as its run or wait recorded it. */
const FAILING_VERBS: Record<string, 'step' | 'activity'> = { step: 'step', 'activity.run': 'activity', 'activity.wait': 'activity' };

/** The last step or activity that failed, with the last line of its stderr (FailedCommand.said). */
export interface FailedCommand {
  what: 'step' | 'activity';
  name: string;
  exitCode: number;
  said: string | null;
}

/**
 * The last step or activity whose command failed, with the last line of its stderr (the tail kept
 * beside its result: DoneRequest.stderrTail, ActivityResult.stderrTail): what `spool status` and a
 * Run's message say a run failed at.
 */
export function lastFailedCommand(journal: readonly Entry[]): FailedCommand | null {
  const failed = journal.filter((entry) => entry.kind === 'result' && FAILING_VERBS[entry.verb] && Number(entry.data.exitCode ?? 0) !== 0).at(-1);
  if (!failed) return null;
  // `activity wait --all` (recorded as '*') names the activities it found failed.
  const all = failed.name === '*' && Array.isArray(failed.data.failed) ? (failed.data.failed as unknown[]).map(String).join(', ') : null;
  return {
    what: FAILING_VERBS[failed.verb] ?? 'step',
    name: all ?? failed.name,
    exitCode: Number(failed.data.exitCode),
    said: lastLineOf(String(failed.data.stderrTail ?? '')),
  };
}

/** The last line of text that is not blank, trimmed; null when there is none. */
export function lastLineOf(text: string): string | null {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? null
  );
}
