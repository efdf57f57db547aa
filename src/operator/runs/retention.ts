import type { Handler, Run, Schedule, Workflow } from '../api/generated.js';
import { LABELS } from '../naming.js';
import { isFinishedPhase } from './run-status.js';

/** What retention reads besides the Runs: the objects whose settings apply to them. */
export interface RetentionLookups {
  workflow(namespace: string, name: string): Workflow | undefined;
  handler(namespace: string, name: string): Handler | undefined;
  schedule(namespace: string, name: string): Schedule | undefined;
  /** The operator's --run-ttl in seconds; null keeps finished Runs (unless a history limit applies). */
  defaultTtlSeconds: number | null;
}

export interface Expired {
  run: Run;
  /** Why, for the log line: `ttl 3600s` or `history limit 3 of Handler on-order`. */
  reason: string;
}

/** When the Run's run ended, or undefined while it has not (or its status does not say). */
export function finishedAt(run: Run): Date | undefined {
  if (!isFinishedPhase(run.status?.phase)) return undefined;
  // A Run refused at admission has no finishedAt: it ended when its condition said so.
  const when =
    run.status?.finishedAt ?? run.status?.conditions?.find((c) => c.type === 'Succeeded')?.lastTransitionTime;
  const date = when ? new Date(when) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
}

/**
 * The finished Runs to delete now, as the Job and CronJob controllers would: past their
 * ttlSecondsAfterFinished (the Run's own, else its Workflow's, else the operator's), or beyond the
 * successful/failed history limit of the Handler or Schedule that started them (newest kept). A Run
 * whose child runs have not all finished is kept: deleting it would take their Runs with it
 * (ownerReferences), and that would cancel them. Only the resources go: the store keeps the runs.
 */
export function expiredRuns(runs: readonly Run[], lookups: RetentionLookups, now: Date): Expired[] {
  const expired = new Map<Run, string>();
  const unfinishedParents = new Set<string>();
  for (const run of runs) {
    const parent = run.metadata.labels?.[LABELS.parent];
    if (parent && !finishedAt(run)) unfinishedParents.add(`${run.metadata.namespace ?? ''}/${parent}`);
  }
  const histories = new Map<
    string,
    { limits: { succeeded?: number; failed?: number }; owner: string; runs: { run: Run; at: Date }[] }
  >();
  for (const run of runs) {
    const at = finishedAt(run);
    if (!at) continue;
    const namespace = run.metadata.namespace ?? 'default';
    const ttl =
      run.spec.ttlSecondsAfterFinished ??
      lookups.workflow(namespace, run.spec.workflowRef.name)?.spec.ttlSecondsAfterFinished ??
      lookups.defaultTtlSeconds;
    if (ttl !== null && ttl !== undefined && at.getTime() + ttl * 1000 <= now.getTime())
      expired.set(run, `ttl ${ttl}s after it finished`);
    const handler = run.metadata.labels?.[LABELS.handler];
    const schedule = run.metadata.labels?.[LABELS.schedule];
    const owner = handler
      ? lookups.handler(namespace, handler)
      : schedule
        ? lookups.schedule(namespace, schedule)
        : undefined;
    if (!owner) continue;
    const key = `${namespace}/${handler ? `Handler ${handler}` : `Schedule ${schedule ?? ''}`}`;
    const history = histories.get(key) ?? {
      limits: { succeeded: owner.spec.successfulRunsHistoryLimit, failed: owner.spec.failedRunsHistoryLimit },
      owner: key.slice(namespace.length + 1),
      runs: [],
    };
    history.runs.push({ run, at });
    histories.set(key, history);
  }
  for (const { limits, owner, runs: finished } of histories.values()) {
    // Newest first; the same moment falls back to the name, so every replica picks the same ones.
    finished.sort(
      (a, b) => b.at.getTime() - a.at.getTime() || (b.run.metadata.name ?? '').localeCompare(a.run.metadata.name ?? ''),
    );
    for (const outcome of ['succeeded', 'failed'] as const) {
      const limit = limits[outcome];
      if (limit === undefined) continue;
      const ofOutcome = finished.filter(({ run }) => (run.status?.phase === 'Succeeded') === (outcome === 'succeeded'));
      for (const { run } of ofOutcome.slice(limit))
        if (!expired.has(run)) expired.set(run, `${outcome} history limit ${limit} of ${owner}`);
    }
  }
  return [...expired]
    .filter(
      ([run]) => !unfinishedParents.has(`${run.metadata.namespace ?? ''}/${run.metadata.labels?.[LABELS.run] ?? ''}`),
    )
    .map(([run, reason]) => ({ run, reason }));
}
