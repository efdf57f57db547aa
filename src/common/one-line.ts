/**
 * A refusal is one line (DESIGN.md §3), but it may quote what was sent: a name or a verb holding a
 * line break or another control character. Those are written escaped, as JSON writes them.
 */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (char) => JSON.stringify(char).slice(1, -1));
}
