/** Output for people: an aligned table, and ages like `5s`, `3m`, `2h`. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** A journal as `spool journal` prints it (and `spool test` under a failed case): a call or result a row. */
export function journalTable(journal: readonly { position: number; kind: string; verb: string; name: string; data: unknown }[]): string {
  return table(
    ['POS', 'KIND', 'VERB', 'NAME', 'DATA'],
    journal.map((entry) => [String(entry.position + 1), entry.kind, entry.verb, entry.name, JSON.stringify(entry.data)]),
  );
}

export function age(iso: unknown, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(String(iso))) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}
