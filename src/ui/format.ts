/** Times in the viewer's own zone and durations as a person says them. */

const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });
const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const formatTime = (iso: string): string => absolute.format(new Date(iso));
export const formatFullTime = (iso: string): string => full.format(new Date(iso));
export const formatClock = (iso: string): string => clock.format(new Date(iso));

/** 0.4 s, 12 s, 3 min 4 s, 2 h 5 min, 3 d 4 h: two units at most, the larger first. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  // Two units are shown, so round to the smaller of them: 1 d 23 h 59 min 55 s reads 2 d.
  const exact = Math.round(seconds);
  const total = exact >= 86_400 ? Math.round(exact / 3_600) * 3_600 : exact >= 3_600 ? Math.round(exact / 60) * 60 : exact;
  const units: [string, number][] = [
    ['d', Math.floor(total / 86_400)],
    ['h', Math.floor((total % 86_400) / 3_600)],
    ['min', Math.floor((total % 3_600) / 60)],
    ['s', total % 60],
  ];
  const first = units.findIndex(([, count]) => count > 0);
  return units
    .slice(first, first + 2)
    .filter(([, count]) => count > 0)
    .map(([unit, count]) => `${count} ${unit}`)
    .join(' ');
}

/** "3 min ago", "in 2 h 5 min", "just now". */
export function formatRelative(iso: string, now = Date.now()): string {
  const delta = new Date(iso).getTime() - now;
  if (Math.abs(delta) < 5000) return 'just now';
  const span = formatDuration(Math.abs(delta));
  return delta < 0 ? `${span} ago` : `in ${span}`;
}

/** A value a person reads: text as it is, anything else as JSON. */
export function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}
