import { fstatSync } from 'node:fs';

/**
 * The identity of what a descriptor writes to, so the in-script client can tell when its stdout is
 * the run's log (and not print replayed output into it a second time).
 */
export function outputIdentity(output: 'inherit' | number): string {
  try {
    const stat = fstatSync(output === 'inherit' ? 1 : output);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return '';
  }
}
