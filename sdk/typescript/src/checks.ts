import { ScriptError } from './errors.js';

/** Arguments refused before anything is sent, so a bad call takes no place in the journal. */

export function checkArgv(argv: readonly string[], what: string): void {
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((arg) => typeof arg === 'string')) {
    throw new ScriptError('usage', `${what}: argv must be a non-empty array of strings (the program, then its arguments)`);
  }
}

/** Durations go on the wire as whole milliseconds. */
export function wholeMs(ms: number, what: string): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new ScriptError('usage', `${what}: a duration must be a finite, non-negative number of milliseconds, not ${String(ms)}`);
  }
  return Math.round(ms);
}
