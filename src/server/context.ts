import type { Store } from '../store/store.js';

/** What the API needs from whoever serves it (the dev server here, the operator on a cluster). */
export interface ServerContext {
  store: Store;
  env: string;
  defaultProject: string;
  now(): Date;
  /** New work is in the store: look for it now. */
  poke(): void;
  /** End the script of a pass under way for this run. */
  abortPass(runId: string): void;
}
