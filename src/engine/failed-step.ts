/** A journal entry as the store and the API both give it. */
interface Entry {
  kind: string;
  verb: string;
  name: string;
  data: Record<string, unknown>;
}

/**
 * The last step whose command failed, with the last line of its stderr (the tail kept beside its
 * result, DoneRequest.stderrTail): what `spool status` and a Run's message say a run failed at.
 */
export function lastFailedStep(journal: readonly Entry[]): { name: string; exitCode: number; said: string | null } | null {
  const failed = journal.filter((entry) => entry.kind === 'result' && entry.verb === 'step' && Number(entry.data.exitCode ?? 0) !== 0).at(-1);
  if (!failed) return null;
  return { name: failed.name, exitCode: Number(failed.data.exitCode), said: lastLineOf(String(failed.data.stderrTail ?? '')) };
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
