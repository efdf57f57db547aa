import type { JournalEntry } from '../store/types.js';

/**
 * The journal as people and the API see it. A step_fn's value is stored as JSON text (so a replay
 * returns its keys in their order); here it is shown as the value it is.
 */
export function journalView(entries: JournalEntry[]): JournalEntry[] {
  return entries.map((entry) => {
    if (entry.verb !== 'step_fn' || entry.kind !== 'result' || typeof entry.data.json !== 'string') return entry;
    const { json, ...rest } = entry.data;
    return { ...entry, data: { ...rest, value: JSON.parse(json) as unknown } };
  });
}

/**
 * The journal as the store keeps it, from the view above: a step_fn's value back to its JSON text,
 * which is the text the run recorded (JSON.stringify of a parsed value gives the same text back).
 */
export function journalFromView(entries: JournalEntry[]): JournalEntry[] {
  return entries.map((entry) => {
    if (entry.verb !== 'step_fn' || entry.kind !== 'result' || !('value' in entry.data) || 'json' in entry.data) return entry;
    const { value, ...rest } = entry.data;
    return { ...entry, data: { ...rest, json: JSON.stringify(value ?? null) } };
  });
}
