import type { SqlClient } from '../sql.js';
import type { ArtifactRecord, ArtifactStore, BlobBackend, FinishedRunArtifacts } from './types.js';

type Row = Record<string, unknown>;

function toArtifact(row: Row): ArtifactRecord {
  return {
    runId: row.run_id as string,
    name: row.name as string,
    position: Number(row.position),
    size: Number(row.size),
    sha256: row.sha256 as string,
    contentType: row.content_type as string,
    blobKey: row.blob_key as string,
    parts: Number(row.parts),
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(String(row.created_at)),
  };
}

/** Artifact metadata in the `artifacts` table; the bytes in `blobs`. */
export class SqlArtifacts implements ArtifactStore {
  constructor(
    private readonly db: SqlClient,
    readonly blobs: BlobBackend,
  ) {}

  async record(artifact: Omit<ArtifactRecord, 'createdAt'>): Promise<ArtifactRecord> {
    await this.db.query(
      `insert into artifacts (run_id, name, position, size, sha256, content_type, blob_key, parts)
       values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (run_id, name) do nothing`,
      [artifact.runId, artifact.name, artifact.position, artifact.size, artifact.sha256, artifact.contentType, artifact.blobKey, artifact.parts],
    );
    const stored = await this.get(artifact.runId, artifact.name);
    if (!stored) throw new Error(`artifact '${artifact.name}' of run ${artifact.runId} was not recorded`);
    return stored;
  }

  async get(runId: string, name: string): Promise<ArtifactRecord | null> {
    const rows = await this.db.query(`select * from artifacts where run_id = $1 and name = $2`, [runId, name]);
    return rows[0] ? toArtifact(rows[0]) : null;
  }

  async list(runId: string): Promise<ArtifactRecord[]> {
    const rows = await this.db.query(`select * from artifacts where run_id = $1 order by position, name`, [runId]);
    return rows.map(toArtifact);
  }

  async totalBytes(runId: string): Promise<number> {
    const rows = await this.db.query<{ total: unknown }>(
      `select coalesce(sum(size), 0) as total from artifacts where run_id = $1`,
      [runId],
    );
    return Number(rows[0]?.total ?? 0);
  }

  async finishedRunsWithArtifacts(limit: number): Promise<FinishedRunArtifacts[]> {
    const rows = await this.db.query<Row>(
      `select r.id, r.project, r.workflow, r.finished_at, count(*) as count, coalesce(sum(a.size), 0) as bytes
         from artifacts a join runs r on r.id = a.run_id
        where r.finished_at is not null
        group by r.id, r.project, r.workflow, r.finished_at
        order by r.finished_at, r.id limit $1`,
      [limit],
    );
    return rows.map((row) => ({
      runId: row.id as string,
      project: row.project as string,
      workflow: row.workflow as string,
      finishedAt: row.finished_at instanceof Date ? row.finished_at : new Date(String(row.finished_at)),
      count: Number(row.count),
      bytes: Number(row.bytes),
    }));
  }

  async deleteRunArtifacts(runId: string): Promise<number> {
    const records = await this.list(runId);
    for (const prefix of [...records.map((record) => record.blobKey), `${runId}/`]) await this.blobs.deletePrefix(prefix);
    const deleted = await this.db.query(`delete from artifacts where run_id = $1 returning name`, [runId]);
    return deleted.length;
  }
}
