/** Sends `signal` to the process group led by `pid` (a child spawned `detached`), if it is still there. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}
