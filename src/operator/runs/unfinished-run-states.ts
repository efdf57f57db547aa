import type { Store } from '../../store/store.js';
import { TERMINAL_STATUSES } from '../../store/types.js';

/**
 * How far before the last read the next one starts. A run's state is written with updated_at =
 * now(), the start of the transaction writing it, and is seen once that commits: a transaction
 * that began before a read and committed after it is older than that read. Every transaction
 * writing a run (src/engine, src/store) is a few statements on one connection doing nothing but
 * the database's work, so it commits milliseconds after it began, or a second or two on a database
 * under load; 5 s covers that with room and still re-reads only the last 5 s of changes (whose
 * states compare equal, so nothing is queued again). A transaction slower still is seen by the
 * next full read.
 */
const OVERLAP_MS = 5_000;

/**
 * How often every unfinished run is read whole: what the reads of changes cannot see (a run that
 * left the store, a write that outlasted the overlap, a database whose clock went back on failover).
 */
export const FULL_READ_EVERY_MS = 60_000;

/**
 * Every unfinished run's state in the store, which the operator's sweep compares its Runs with:
 * read whole at the first sweep (of a new leader) and every minute, and in between brought up to
 * date with only the runs changed since the last read, so a sweep costs what changed, not the runs
 * there are (issue 36; docs/scaling.md).
 */
export class UnfinishedRunStates {
  /** Per unfinished run, its state (as a string, to compare). */
  private states = new Map<string, string>();
  /** The database's time of the last read; null before the first. */
  private readAt: Date | null = null;
  private lastFullRead = 0;

  constructor(
    private readonly store: Store,
    private readonly idPrefix: string,
    private readonly fullReadEveryMs = FULL_READ_EVERY_MS,
  ) {}

  async read(): Promise<ReadonlyMap<string, string>> {
    const started = performance.now();
    if (this.readAt === null || started - this.lastFullRead >= this.fullReadEveryMs) {
      const { states, readAt } = await this.store.listUnfinishedRunStates(this.idPrefix);
      this.states = new Map(states.map((state) => [state.id, JSON.stringify(state)]));
      this.readAt = readAt;
      this.lastFullRead = started;
      return this.states;
    }
    const { states, readAt } = await this.store.listRunStatesChangedSince(this.idPrefix, new Date(this.readAt.getTime() - OVERLAP_MS));
    for (const state of states) {
      // A run that finished leaves: its Run is compared with "finished" once (RunController.sweep).
      if (TERMINAL_STATUSES.includes(state.status)) this.states.delete(state.id);
      else this.states.set(state.id, JSON.stringify(state));
    }
    this.readAt = readAt;
    return this.states;
  }
}
