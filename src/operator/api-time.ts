/** A time as Kubernetes stores it, to the second: writing milliseconds would make every comparison differ. */
export function apiTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}
