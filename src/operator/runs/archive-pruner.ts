import type { Logger } from '../../common/json-log.js';
import type { Store } from '../../store/store.js';

export interface ArchivePrunerOptions {
  store: Store;
  /** How long after it finished a run's journal, logs and outputs are kept (--archive-retention). */
  retentionMs: number;
  /** How often the leader looks (hourly unless set): the cutoff moves slowly, a late sweep costs nothing. */
  everyMs?: number;
  log: Logger;
  now?: () => Date;
}

/** Runs deleted per statement: one transaction stays short however much is due at once. */
const BATCH = 500;

/**
 * The archive's own retention, longer than the Run resources': runs that finished before
 * now - retention leave the store (src/store: deleteRunsFinishedBefore), batch by batch.
 */
export function startArchivePruner(options: ArchivePrunerOptions): { stop(): Promise<void> } {
  const { store, log } = options;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const prune = async (): Promise<void> => {
    const cutoff = new Date((options.now ?? (() => new Date()))().getTime() - options.retentionMs);
    let total = 0;
    for (;;) {
      const gone = await store.deleteRunsFinishedBefore(cutoff, BATCH);
      total += gone;
      if (gone < BATCH || stopped) break;
    }
    if (total > 0) log.info('archived runs deleted', { runs: total, finishedBefore: cutoff.toISOString() });
  };
  const tick = (): void => {
    running = prune()
      .catch((error: unknown) => log.error('deleting archived runs failed', error))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.everyMs ?? 3_600_000);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
