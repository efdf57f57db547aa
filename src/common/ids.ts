import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 16 characters of [a-z0-9]: safe in Kubernetes names and labels. */
function suffixFrom(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < 16; i++) out += ALPHABET[(bytes[i] ?? 0) % ALPHABET.length];
  return out;
}

export function newRunId(env: string, project: string): string {
  return `${env}:${project}:run-${suffixFrom(randomBytes(16))}`;
}

/** A run id that is the same every time for the same parts (handler runs, child runs). */
export function derivedRunId(env: string, project: string, ...parts: string[]): string {
  return `${env}:${project}:run-${suffixFrom(createHash('sha256').update(parts.join('\0')).digest())}`;
}

/** The project of a run id (`ENV:PROJECT:run-…`): a namespace on a cluster; '' for an id of another shape. */
export function projectOfRunId(runId: string): string {
  return runId.split(':')[1] ?? '';
}

export function stableHash(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32);
}

/** The same on every attempt of one step call site of one run; new on a rerun (a new run id). */
export function idempotencyKey(runId: string, job: string, step: string, occurrence: number, index?: number): string {
  const parts: (string | number)[] = [runId, job, step, occurrence];
  if (index !== undefined) parts.push(index);
  return `spool-${stableHash(...parts)}`;
}
