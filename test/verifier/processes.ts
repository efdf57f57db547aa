import { readFileSync, readdirSync } from 'node:fs';

/**
 * Every process of one case (the runner or the dev server, its scripts and their children), found
 * by the VERIFY_CASE each of them inherits: a script is a process group of its own, so its parent's
 * tree or group would miss it.
 */
export function processesOf(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(`VERIFY_CASE=${dir}\0`)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A lost machine: every process of the case, all at once, unwarned; again until none is left. */
export async function killAll(dir: string): Promise<void> {
  // Again: a runner may start a pass's script between a look and the kill.
  await until(() => {
    for (const pid of processesOf(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    return processesOf(dir).length === 0;
  }, 10_000);
}

/** Polls until check answers true or ms have passed; answers whether it did. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, everyMs = 20): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return check();
}
