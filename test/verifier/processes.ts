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

const SCRIPT_FILE = /\/wf\.(sh|py)$/;
const argvOf = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
const parentOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

/**
 * The case's script process (the interpreter running wf.sh or wf.py), if one runs now: the top one,
 * as bash forks copies of itself (pipelines, subshells) that run the same file.
 */
export function scriptProcessOf(dir: string): number | null {
  const scripts = new Set<number>();
  for (const pid of processesOf(dir)) {
    try {
      if (argvOf(pid).some((arg) => SCRIPT_FILE.test(arg))) scripts.add(pid);
    } catch {
      // gone meanwhile
    }
  }
  for (const pid of scripts) {
    try {
      if (!scripts.has(parentOf(pid))) return pid;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** The case's launcher (`spool launcher`, which starts its scripts), if one runs now. */
export function launcherProcessOf(dir: string): number | null {
  for (const pid of processesOf(dir)) {
    try {
      if (argvOf(pid)[1] === 'launcher') return pid;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
