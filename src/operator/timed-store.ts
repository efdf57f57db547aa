import type { Store } from '../store/store.js';

/**
 * The store with every journal write timed: the write a durable call waits for before it answers,
 * so its latency is what scripts feel on each call.
 */
export function timingJournalWrites(store: Store, observe: (seconds: number) => void): Store {
  const timed = Object.create(store) as Store;
  timed.appendJournal = async (entry) => {
    const started = performance.now();
    try {
      return await store.appendJournal(entry);
    } finally {
      observe((performance.now() - started) / 1000);
    }
  };
  return timed;
}
