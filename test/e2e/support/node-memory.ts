// Resident memory of the node's own processes, for the e2e files that report it (the local node is
// this machine, so a pod's processes are processes here, visible in /proc to the root test). Each
// container's process carries HOSTNAME=<its pod's name> in its environment, which is how a process
// is matched to its pod.
import { readdirSync, readFileSync } from 'node:fs';

/** What one kind of process is: its command line includes all of `argv`. */
export interface ProcessKind {
  label: string;
  argv: string[];
  /** Whose pods count: a pod name starting with this. */
  podPrefix: string;
}

/** Peak resident memory (VmHWM) and the largest current one (VmRSS) seen, in MiB, by pod. */
export type MemorySeen = Record<string, { peakMiB: number; largestMiB: number }>;

/**
 * Samples the processes of `kinds` every `everyMs` until `stop()`, which answers what was seen,
 * by `label pod`. A process that ended between two samples keeps the peak last read.
 */
export function sampleNodeMemory(kinds: ProcessKind[], everyMs = 200): { stop(): MemorySeen } {
  const seen: MemorySeen = {};
  const sample = (): void => {
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      const argv = read(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
      const kind = kinds.find((each) => each.argv.every((arg) => argv.includes(arg)));
      if (!kind) continue;
      const pod = /(?:^|\0)HOSTNAME=([^\0]*)/.exec(read(`/proc/${pid}/environ`) ?? '')?.[1] ?? '';
      if (!pod.startsWith(kind.podPrefix)) continue;
      const status = read(`/proc/${pid}/status`) ?? '';
      const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
      const key = `${kind.label} ${pod}`;
      const before = seen[key] ?? { peakMiB: 0, largestMiB: 0 };
      seen[key] = { peakMiB: Math.max(before.peakMiB, kib('VmHWM') / 1024), largestMiB: Math.max(before.largestMiB, kib('VmRSS') / 1024) };
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return seen;
    },
  };
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // the process ended meanwhile
  }
}
