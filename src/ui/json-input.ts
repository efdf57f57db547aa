/** JSON a person typed, as a value, or the one line saying why it is not JSON; empty text is null. */
export function parseJson(text: string): { value: unknown } | { problem: string } {
  if (text.trim() === '') return { value: null };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { problem: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
