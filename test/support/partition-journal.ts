import { readFileSync } from 'node:fs';
import pg from 'pg';

const SCRIPT = readFileSync(new URL('../../hack/partition-journal.sql', import.meta.url), 'utf8');

/**
 * Runs hack/partition-journal.sql on a migrated database, as docs/scaling.md says to: the journal
 * becomes `partitions` hash partitions by run_id.
 */
export async function partitionJournal(url: string, partitions: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set spool.journal_partitions = ${partitions}`);
    await client.query(SCRIPT);
  } finally {
    await client.end();
  }
}
