import type { Logger } from '../../common/json-log.js';
import type { Store } from '../../store/store.js';
import type { Run, Workflow } from '../api/generated.js';

/** What the sweep reads from the informers' caches (synced before the leader starts it). */
export interface ArtifactSweepLookups {
  /** The Run resource of a run in the store; undefined once it was deleted. */
  runResource(runId: string): Run | undefined;
  workflow(namespace: string, name: string): Workflow | undefined;
}

export interface ArtifactSweeperOptions extends ArtifactSweepLookups {
  store: Store;
  log: Logger;
  /** How often the leader looks (every minute unless set). */
  everyMs?: number;
  now?: () => Date;
  /** A run's artifacts could not be deleted (for the metric the alert reads), by its namespace. */
  onDeletionFailed?(namespace: string): void;
}

export interface SweepOutcome {
  /** Runs whose artifacts were deleted, and why. */
  deleted: { runId: string; reason: string; artifacts: number }[];
  /** Runs whose artifacts could not be deleted (storage down): tried again next sweep. */
  failed: { runId: string; error: string }[];
}

/** Runs looked at per sweep, the longest finished first: one sweep stays short. */
const BATCH = 200;

/**
 * Deletes the artifacts of finished runs whose Run resource is gone, or whose Workflow's
 * `spec.artifacts.ttlSecondsAfterFinished` has passed. No finalizer: `kubectl delete run` never
 * waits on storage. The store keeps the artifact records until their bytes are gone, so a run
 * whose deletion failed (S3 down) is found again by the next sweep: retried every `everyMs`, each
 * failure an error line naming the run and one more in hyperspool_artifact_deletions_failed_total
 * (alert HyperspoolArtifactDeletionsFailing).
 */
export async function sweepArtifacts(options: Omit<ArtifactSweeperOptions, 'everyMs'>): Promise<SweepOutcome> {
  const now = (options.now ?? (() => new Date()))();
  const outcome: SweepOutcome = { deleted: [], failed: [] };
  for (const run of await options.store.artifacts.finishedRunsWithArtifacts(BATCH)) {
    const resource = options.runResource(run.runId);
    let reason: string | undefined;
    if (!resource) reason = 'its Run was deleted';
    else {
      const ttl = options.workflow(resource.metadata.namespace ?? run.project, resource.spec.workflowRef.name)?.spec
        .artifacts?.ttlSecondsAfterFinished;
      if (ttl !== undefined && run.finishedAt.getTime() + ttl * 1000 <= now.getTime())
        reason = `artifacts.ttlSecondsAfterFinished ${ttl}s of Workflow ${resource.spec.workflowRef.name}`;
    }
    if (!reason) continue;
    try {
      const artifacts = await options.store.artifacts.deleteRunArtifacts(run.runId);
      outcome.deleted.push({ runId: run.runId, reason, artifacts });
      options.log.info('artifacts deleted', { runId: run.runId, reason, artifacts, bytes: run.bytes });
    } catch (error) {
      outcome.failed.push({ runId: run.runId, error: error instanceof Error ? error.message : String(error) });
      options.log.error('deleting artifacts failed; the next sweep tries again', error, { runId: run.runId, reason });
      options.onDeletionFailed?.(run.project);
    }
  }
  return outcome;
}

/** The leader's sweep, every minute unless told otherwise; stop() waits for one under way. */
export function startArtifactSweeper(options: ArtifactSweeperOptions): { stop(): Promise<void>; poke(): void } {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<unknown> | null = null;
  const tick = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (running || stopped) return;
    running = sweepArtifacts(options)
      .catch((error: unknown) => options.log.error('the artifact sweep failed; it runs again', error))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(tick, options.everyMs ?? 60_000);
      });
  };
  tick();
  return {
    poke: tick,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
