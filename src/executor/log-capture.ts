import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import type { PassOutput } from './executor.js';
import { tailFile } from '../common/file-tail.js';
import type { StoreOptions } from '../store/open.js';

/**
 * A pass writes stdout and stderr into one file (so their order is kept); this copies what it
 * writes into the store as it goes, where `spool logs` reads it.
 */
export function captureLog(store: Store, logsDir: string, run: RunRecord): PassOutput {
  const dir = join(logsDir, run.id.replace(/[^a-z0-9-]/gi, '_'));
  return tailFile(join(dir, `pass-${run.passes}.log`), (bytes) => store.appendLog(run.id, run.passes, bytes));
}

/** Where passes' log files go: beside the embedded store, or in the temp dir for a PostgreSQL one. */
export function logsDirFor(options: StoreOptions): string {
  return join(options.databaseUrl && !options.dataDir ? tmpdir() : (options.dataDir ?? '.spool'), 'logs');
}
