// Where the node's CPU goes over a stretch of a bench: the local node's processes are this
// machine's, so each long-lived one (kube-apiserver, etcd, kubelet, containerd, ...) is read from
// /proc, and every pod together (the pass pods, which come and go, and the operator's and
// PostgreSQL's) from the kubelet's cgroup root (hack/local-cluster.sh: /hyperspool), whose cpuacct
// keeps the time of cgroups already removed. The machine's own total comes from /proc/stat: on a
// shared machine it holds other people's work too. The named rows are the node's: processes in a
// network namespace other than this process's (the node runs in one of its own, its pods in theirs),
// so other people's control planes and tests on this machine are left out of them.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

const TICKS_PER_SECOND = 100;
const PODS_CPUACCT = '/sys/fs/cgroup/cpuacct/hyperspool/kubepods/cpuacct.usage';

export interface CpuSnapshot {
  /** CPU seconds by pid of the node's processes, with the command's name. */
  processes: Map<number, { name: string; seconds: number }>;
  /** CPU seconds of every pod, or NaN where the cgroup is not there. */
  pods: number;
  /** CPU seconds the whole machine was busy (not idle, not waiting on I/O). */
  busy: number;
  at: number;
}

export function cpuSnapshot(): CpuSnapshot {
  const processes = new Map<number, { name: string; seconds: number }>();
  const here = readlinkSync('/proc/self/ns/net');
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(join('/proc', entry, 'ns', 'net')) === here) continue;
      const stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
      // The name is in parentheses and may hold spaces: the fields after it are counted from its end.
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      processes.set(Number(entry), { name, seconds: ticks / TICKS_PER_SECOND });
    } catch {
      // Gone while listed.
    }
  }
  let pods = NaN;
  try {
    pods = Number(readFileSync(PODS_CPUACCT, 'utf8')) / 1e9;
  } catch {
    // Not the local node's cgroups.
  }
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  return { processes, pods, busy: (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND, at: Date.now() };
}

/**
 * CPU seconds between two snapshots: the machine's, every pod's, and the node's busiest commands
 * among processes alive at both (summed by name).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot, top = 10): string {
  const byName = new Map<string, number>();
  for (const [pid, now] of after.processes) {
    const then = before.processes.get(pid);
    if (!then || then.name !== now.name) continue;
    byName.set(now.name, (byName.get(now.name) ?? 0) + now.seconds - then.seconds);
  }
  const seconds = (after.at - before.at) / 1000;
  const rows = [...byName].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `CPU over ${seconds.toFixed(0)} s: the machine ${(after.busy - before.busy).toFixed(0)} s busy (${((after.busy - before.busy) / seconds).toFixed(2)} cores)`,
    `every pod ${(after.pods - before.pods).toFixed(0)} s`,
    ...rows.map(([name, used]) => `${name} ${used.toFixed(1)} s`),
  ].join('; ');
}
