import type { Store } from '../store/store.js';

/**
 * The store with every journal write timed: the write a durable call waits for before it answers,
 * so its latency is what scripts feel on each call (a fresh step's call and result are one write).
 */
export function timingJournalWrites(store: Store, observe: (seconds: number) => void): Store {
  const timedCall =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      try {
        return await call(...args);
      } finally {
        observe((performance.now() - started) / 1000);
      }
    };
  const timed = Object.create(store) as Store;
  timed.appendJournal = timedCall((entry) => store.appendJournal(entry));
  timed.appendJournalEntries = timedCall((entries) => store.appendJournalEntries(entries));
  return timed;
}
