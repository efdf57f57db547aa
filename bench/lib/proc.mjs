/** What the benchmarks read of processes: CPU from /proc, and a command run to its end. */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks a second, as /proc counts CPU time (USER_HZ, 100 on Linux). */
export const TICK = 100;

function statFields(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
}

/**
 * CPU jiffies of a process and of every child it has reaped (utime, stime, cutime, cstime): a
 * server's own work and its finished scripts', since a script's own children are reaped into it.
 */
export function treeJiffies(pid) {
  try {
    const f = statFields(pid);
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    return 0;
  }
}

/**
 * CPU jiffies of a process and all its descendants, live or reaped: treeJiffies of it and of every
 * live descendant (a reaped one is in its parent's cutime; a live one is counted by itself).
 */
export function familyJiffies(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const ppid = Number(statFields(entry)[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // gone
    }
  }
  let total = 0;
  const walk = (at) => {
    total += treeJiffies(at);
    for (const child of children.get(at) ?? []) walk(child);
  };
  walk(pid);
  return total;
}

/** CPU jiffies of a process alone (utime, stime). */
export function ownJiffies(pid) {
  try {
    const f = statFields(pid);
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** A PostgreSQL server's CPU jiffies: the postmaster with the backends it reaped, and the live backends. */
export function postgresJiffies(postmaster) {
  let total = treeJiffies(postmaster);
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const f = statFields(pid);
      if (Number(f[1]) === postmaster) total += Number(f[11]) + Number(f[12]);
    } catch {
      // gone
    }
  }
  return total;
}

/** The postmaster's pid, from the data directory a postgres.ts server URL names (its port). */
export function postmasterOf(url, tmp) {
  const port = new URL(url).port;
  for (const entry of readdirSync(tmp)) {
    if (!entry.startsWith('spool-pg-')) continue;
    try {
      const lines = readFileSync(`${tmp}/${entry}/data/postmaster.pid`, 'utf8').split('\n');
      if (lines[3] === port) return Number(lines[0]);
    } catch {
      // another's, or gone
    }
  }
  throw new Error(`no postmaster listens on port ${port}`);
}

/** Resident set size of a process, MiB. */
export function rssMiB(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

/** Runs a command to its end (killed at the timeout); resolves with its output, rejects on a non-zero exit. */
export function runCommand(file, args, { env = process.env, timeoutMs = 600_000, cwd } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolveRun(output);
      else reject(new Error(`${file} ${args.join(' ')} exited ${code ?? signal}:\n${output}`));
    });
  });
}
