/** Exit codes of the CLI (DESIGN.md §3); common, so the error kinds can name theirs. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  taken: 3,
  timedOut: 124,
  unavailable: 69,
} as const;
