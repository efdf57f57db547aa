/**
 * Artifacts: files a run keeps between passes and pods (docs/artifacts.md). The metadata is always
 * in the SQL store; the bytes are in a BlobBackend (PostgreSQL rows by default), written and read
 * one part at a time so nothing holds a whole artifact in memory.
 */
export interface ArtifactRecord {
  runId: string;
  name: string;
  /** The journal position of the `artifact put` that stored it. */
  position: number;
  size: number;
  sha256: string;
  contentType: string;
  /** Where its parts are in the blob backend. */
  blobKey: string;
  parts: number;
  createdAt: Date;
}

/**
 * Where the bytes are. A blob is a key with parts numbered from 0, each written once; a key's
 * parts are read back one at a time in order. Backends share one contract suite
 * (test/store/blob-backend.contract.test.ts).
 */
export interface BlobBackend {
  /** A name for messages and docs: 'postgresql', 's3'. */
  readonly kind: string;
  writePart(key: string, part: number, bytes: Uint8Array): Promise<void>;
  /** The part's bytes, or null when the key has no such part. */
  readPart(key: string, part: number): Promise<Uint8Array | null>;
  /** Removes every blob whose key starts with `prefix` (an upload a crashed pass left, a run's artifacts). */
  deletePrefix(prefix: string): Promise<void>;
  /** Lets go of connections of its own (the store closes it). */
  close?(): void;
}

/** The artifacts' metadata, and the backend that holds their bytes. */
export interface ArtifactStore {
  readonly blobs: BlobBackend;
  /** Records a finished artifact; a second record of the same run and name keeps the first. */
  record(artifact: Omit<ArtifactRecord, 'createdAt'>): Promise<ArtifactRecord>;
  get(runId: string, name: string): Promise<ArtifactRecord | null>;
  list(runId: string): Promise<ArtifactRecord[]>;
  /** The bytes a run's artifacts take, for the per-run limit. */
  totalBytes(runId: string): Promise<number>;
  /** Finished runs that still have artifacts, the longest finished first (the operator's sweep). */
  finishedRunsWithArtifacts(limit: number): Promise<FinishedRunArtifacts[]>;
  /**
   * Deletes a run's artifacts: their bytes first (each record's key, and the run's own key prefix,
   * where a crashed put may have left parts), then the records. Storage that fails leaves the
   * records, so a later call finds the run again. Answers how many records went.
   */
  deleteRunArtifacts(runId: string): Promise<number>;
}

export interface FinishedRunArtifacts {
  runId: string;
  project: string;
  workflow: string;
  finishedAt: Date;
  count: number;
  bytes: number;
}
