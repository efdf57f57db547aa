import { journalView } from '../engine/journal-view.js';
import type { JournalEntry, JournalTime } from '../store/types.js';
import type { TimelineEntry } from '../api/responses.js';

const iso = (date: Date | undefined): string | null => (date ? date.toISOString() : null);

function runIdsOf(entry: { call: Record<string, unknown> | null; result: Record<string, unknown> | null }): string[] {
  const ids = new Set<string>();
  for (const data of [entry.call, entry.result]) {
    if (!data) continue;
    if (typeof data.runId === 'string') ids.add(data.runId);
    if (Array.isArray(data.runIds)) for (const id of data.runIds) if (typeof id === 'string') ids.add(id);
  }
  return [...ids];
}

/**
 * A run's durable calls as the run page's timeline shows them: each call and its result joined,
 * when it began and ended, which pass recorded it (the passes after it replayed it), and whether it
 * failed (a step or activity that exited non-zero) or timed out (a bounded wait).
 */
export function timeline(entries: JournalEntry[], times: JournalTime[]): TimelineEntry[] {
  const timeOf = new Map(times.map((time) => [`${time.position}:${time.kind}`, time]));
  const byPosition = new Map<number, { call?: JournalEntry; result?: JournalEntry }>();
  for (const entry of journalView(entries)) {
    const pair = byPosition.get(entry.position) ?? {};
    pair[entry.kind] = entry;
    byPosition.set(entry.position, pair);
  }
  return [...byPosition.entries()]
    .sort(([a], [b]) => a - b)
    .map(([position, { call, result }]) => {
      const first = call ?? result;
      const started = timeOf.get(`${position}:call`) ?? timeOf.get(`${position}:result`);
      const ended = result ? timeOf.get(`${position}:result`) : undefined;
      const callData = call?.data ?? null;
      const resultData = result?.data ?? null;
      const exit = resultData?.exitCode;
      const exitCode = typeof exit === 'number' ? exit : null;
      const label = typeof callData?.label === 'string' ? callData.label : typeof callData?.text === 'string' ? callData.text : null;
      const pair = { call: callData, result: resultData };
      return {
        position,
        verb: first?.verb ?? '',
        name: first?.name ?? '',
        occurrence: first?.occurrence ?? 0,
        label,
        ...pair,
        startedAt: iso(started?.at),
        endedAt: iso(ended?.at),
        durationMs: started && ended ? Math.max(0, ended.at.getTime() - started.at.getTime()) : null,
        pass: started?.pass ?? null,
        exitCode,
        failed: exitCode !== null && exitCode !== 0,
        timedOut: resultData?.timedOut === true,
        runIds: runIdsOf(pair),
      };
    });
}
