import type { SqlClient } from '../sql.js';
import type { BlobBackend } from './types.js';

/**
 * The default backend: each part a row of `artifact_parts` (PostgreSQL or PGlite alike). Parts
 * stay small (the client sends 512 KiB), so no row is huge and no query returns more than a part.
 */
export class PostgresBlobs implements BlobBackend {
  readonly kind = 'postgresql';

  constructor(private readonly db: SqlClient) {}

  async writePart(key: string, part: number, bytes: Uint8Array): Promise<void> {
    // A part written again (a retried request) holds the same bytes: the last write is kept.
    await this.db.query(
      `insert into artifact_parts (blob_key, part, data) values ($1, $2, $3)
       on conflict (blob_key, part) do update set data = excluded.data`,
      [key, part, bytes],
    );
  }

  async readPart(key: string, part: number): Promise<Uint8Array | null> {
    const rows = await this.db.query<{ data: Uint8Array }>(
      `select data from artifact_parts where blob_key = $1 and part = $2`,
      [key, part],
    );
    return rows[0]?.data ?? null;
  }

  async deletePrefix(prefix: string): Promise<void> {
    // starts_with, not like: a key may hold '%' or '_'.
    await this.db.query(`delete from artifact_parts where starts_with(blob_key, $1)`, [prefix]);
  }
}
