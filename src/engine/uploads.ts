import type { Hash } from 'node:crypto';

/** An `artifact put` under way in this pass: its parts so far, hashed as they arrive. */
export interface Upload {
  position: number;
  occurrence: number;
  name: string;
  contentType: string;
  /** Where its parts go in the blob backend: `<run>/<position>/<pass>/`; null while only counted. */
  blobKey: string | null;
  hash: Hash;
  size: number;
  parts: number;
  /** What the run's other artifacts take already, for the per-run limit. */
  runTotal: number;
  /**
   * Set when the journal holds another call at this position: the bytes are only counted, and a
   * commit is this determinism error (a limit met on the way is the refusal the first pass got).
   */
  divergence: string | null;
}
