import { readFileSync } from 'node:fs';
import type { startDev } from '../support/dev.js';
import type { RunRecord } from '../../src/store/types.js';

/**
 * Helpers for running pipelines on an in-process `spool dev`: a pipeline run's children (one per
 * job attempt, `<file>#<job>`, or fan_out item, `<file>#<job>[<i>]`) read from the server's store.
 */

export type Dev = Awaited<ReturnType<typeof startDev>>;

/**
 * Polls until `check` answers something truthy, every 100ms: the server shares this process, so
 * polling its store less often leaves it more time.
 */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The job a child run belongs to: `refund.yaml#ask` → `ask`, `p.yaml#fan[3]` → `fan`. */
export function jobOf(child: RunRecord): string {
  const name = child.workflow.slice(child.workflow.lastIndexOf('#') + 1);
  return name.replace(/\[\d+\]$/, '');
}

/** The children of a run, oldest first. */
export async function childrenOf(dev: Dev, runId: string): Promise<RunRecord[]> {
  const children = await dev.store.listRuns({ parentId: runId, limit: 10_000 });
  return children.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
}

/** The jobs of a run that have a succeeded child run, in the order they started. */
export async function jobsThatRan(dev: Dev, runId: string): Promise<string[]> {
  const ran: string[] = [];
  for (const child of await childrenOf(dev, runId)) {
    const job = jobOf(child);
    if (child.status === 'succeeded' && !ran.includes(job)) ran.push(job);
  }
  return ran;
}

/** Polls until a child of the run for `job` is in one of `statuses`; answers it. */
export async function waitForChild(
  dev: Dev,
  runId: string,
  job: string,
  statuses: string[],
  timeoutMs = 60_000,
): Promise<RunRecord> {
  return until(
    `a child of ${runId} for job ${job} to be ${statuses.join('|')}`,
    async () => (await childrenOf(dev, runId)).find((child) => jobOf(child) === job && statuses.includes(child.status)),
    timeoutMs,
  );
}

/** Nanosecond `date +%s%N` stamps as milliseconds. */
export const nsToMs = (ns: string): number => Number(BigInt(ns) / 1_000_000n);

/** The `<word> <ns> <rest>` lines a test's steps appended to a shared file. */
export function stamps(file: string): { what: string; at: number; rest: string }[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [what = '', at = '0', ...rest] = line.trim().split(/\s+/);
      return { what, at: nsToMs(at), rest: rest.join(' ') };
    });
}
