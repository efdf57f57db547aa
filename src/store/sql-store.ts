import { displayText, isPlainText } from '../common/output-bytes.js';
import { PostgresBlobs } from './artifacts/postgres-blobs.js';
import { SqlArtifacts } from './artifacts/sql-artifacts.js';
import type { ArtifactStore, BlobBackend } from './artifacts/types.js';
import { GroupedWrites } from './grouped-writes.js';
import { decodeCursor, encodeCursor, runOrder, runSearchWhere } from './run-search-sql.js';
import { queryRunStats } from './run-stats-sql.js';
import { RUN_SHARD_KEY_SQL, type ShardFilter } from './run-shards.js';
import type { SqlClient } from './sql.js';
import type { Store } from './store.js';
import type {
  ActivityRecord,
  ActivityResult,
  Cell,
  GateAnswerRecord,
  GateClaim,
  EventRecord,
  HandlerRecord,
  ScheduleRecord,
  ThrottleRequest,
  ClaimedPass,
  JournalEntry,
  JournalTime,
  LogLine,
  NewActivity,
  NewRun,
  RunPatch,
  RunRecord,
  RunPage,
  RunState,
  RunStates,
  RunPageFilter,
  RunSearch,
  RunStats,
  RunStatus,
  RunSummary,
  RunnerSettings,
  Wait,
  WorkflowSummary,
} from './types.js';
import { noRuns } from './types.js';

type Row = Record<string, unknown>;

const RUN_COLUMNS: Record<keyof RunPatch, string> = {
  status: 'status',
  awaiting: 'awaiting',
  wait: 'wait',
  wakeAt: 'wake_at',
  error: 'error',
  finishedAt: 'finished_at',
  outputs: 'outputs',
};

const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
/** The run `column` names is in the shards $at (int[]) of $at+1 shards, or any run when $at is null (see shardParams). */
const inShards = (column: string, at: number): string => `($${at}::int[] is null or ${RUN_SHARD_KEY_SQL(column)} % $${at + 1}::int = any($${at}::int[]))`;
const shardParams = (shards: ShardFilter | undefined): unknown[] => (shards ? [[...shards.owned], shards.count] : [null, 1]);
const dateOrNull = (value: unknown): Date | null => (value == null ? null : date(value));
const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

function toRunState(row: Row): RunState {
  return {
    id: row.id as string,
    status: row.status as RunStatus,
    awaiting: (row.awaiting as string | null) ?? null,
    wait: (row.wait as Wait | null) ?? null,
    passes: Number(row.passes),
    error: (row.error as string | null) ?? null,
  };
}

function toRun(row: Row): RunRecord {
  return {
    ...toRunState(row),
    project: row.project as string,
    workflow: row.workflow as string,
    interpreter: row.interpreter as string,
    script: row.script as string,
    input: row.input ?? null,
    subject: (row.subject as string | null) ?? null,
    parentId: (row.parent_id as string | null) ?? null,
    handler: (row.handler as string | null) ?? null,
    idempotencyKey: (row.idempotency_key as string | null) ?? null,
    wakeAt: dateOrNull(row.wake_at),
    outputs: (row.outputs as Record<string, string> | null) ?? {},
    lenient: Boolean(row.lenient),
    cwd: (row.cwd as string | null) ?? null,
    runner: (row.runner as RunnerSettings | null) ?? null,
    rerunOf: row.rerun_of ? { runId: row.rerun_of as string, fromStep: (row.rerun_from_step as string | null) ?? null } : null,
    submittedBy: (row.submitted_by as string | null) ?? null,
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    finishedAt: dateOrNull(row.finished_at),
  };
}

/** The SET list of an update of these run fields, with its parameters ($1 is the run's id). */
function runSets(id: string, patch: RunPatch): { sets: string; params: unknown[] } {
  const sets: string[] = ['updated_at = now()'];
  const params: unknown[] = [id];
  for (const [key, column] of Object.entries(RUN_COLUMNS) as [keyof RunPatch, string][]) {
    if (!(key in patch)) continue;
    const value = patch[key];
    const isJson = key === 'wait' || key === 'outputs';
    params.push(isJson ? json(value) : value);
    sets.push(`${column} = $${params.length}${isJson ? '::jsonb' : ''}`);
  }
  return { sets: sets.join(', '), params };
}

function toEntry(row: Row): JournalEntry {
  return {
    runId: row.run_id as string,
    position: Number(row.position),
    kind: row.kind as JournalEntry['kind'],
    verb: row.verb as string,
    name: row.name as string,
    occurrence: Number(row.occurrence),
    data: row.data as Record<string, unknown>,
  };
}

function toEvent(row: Row): EventRecord {
  return {
    seq: Number(row.seq),
    id: row.id as string,
    project: row.project as string,
    type: row.type as string,
    subject: (row.subject as string | null) ?? null,
    payload: row.payload ?? null,
    emittedAt: date(row.emitted_at),
  };
}

const toCell = (row: Row): Cell => ({ key: row.key as string, value: row.value as string, version: Number(row.version) });

function toActivity(row: Row): ActivityRecord {
  return {
    id: row.id as string,
    runId: row.run_id as string,
    name: row.name as string,
    argv: row.argv as string[],
    cwd: (row.cwd as string | null) ?? null,
    requires: row.requires as string[],
    maxAttempts: Number(row.max_attempts),
    backoffMs: Number(row.backoff_ms),
    retryOnExit: (row.retry_on_exit as number[] | null) ?? null,
    attempt: Number(row.attempt),
    status: row.status as ActivityRecord['status'],
    nextAttemptAt: date(row.next_attempt_at),
    result: (row.result as ActivityResult | null) ?? null,
  };
}

function toHandler(row: Row): HandlerRecord {
  return {
    project: row.project as string,
    name: row.name as string,
    eventType: row.event_type as string,
    workflow: row.workflow as string,
    interpreter: row.interpreter as string,
    script: row.script as string,
    cwd: (row.cwd as string | null) ?? null,
    runner: (row.runner as RunnerSettings | null) ?? null,
  };
}

function toSchedule(row: Row): ScheduleRecord {
  return {
    project: row.project as string,
    name: row.name as string,
    everyMs: row.every_ms == null ? null : Number(row.every_ms),
    cron: (row.cron as string | null) ?? null,
    workflow: row.workflow as string,
    interpreter: row.interpreter as string,
    script: row.script as string,
    cwd: (row.cwd as string | null) ?? null,
    nextAt: date(row.next_at),
    lastRunId: (row.last_run_id as string | null) ?? null,
    skipped: Number(row.skipped),
    runner: (row.runner as RunnerSettings | null) ?? null,
    input: row.input ?? null,
    overlap: row.overlap === 'allow' ? 'allow' : 'skip',
    suspendedAt: dateOrNull(row.suspended_at),
  };
}

const toRunSummary = (row: Row): RunSummary => ({ id: row.id as string, status: row.status as RunStatus, createdAt: date(row.created_at) });

/** The approvals that count: those up to and with the final answer, when it approves. */
function approvalsOf(answers: GateAnswerRecord[]): GateAnswerRecord[] {
  const end = answers.findIndex((each) => each.final);
  return (end === -1 ? answers : answers.slice(0, end + 1)).filter((each) => each.decision === 'approve');
}

/**
 * A journal insert's parameters a row, the rows one insert takes (PostgreSQL allows 65,535
 * parameters) and the runs one claim takes, when writes meet (GroupedWrites).
 */
const JOURNAL_COLUMNS = 7;
const JOURNAL_ENTRIES_PER_INSERT = 500;
const CLAIMS_PER_UPDATE = 500;

/** The one Store implementation; the drivers differ only in the SqlClient they hand it. */
export class SqlStore implements Store {
  readonly artifacts: ArtifactStore;

  /** Journal inserts of concurrent passes, one statement for those that meet (a group commit). */
  private readonly journalWrites = new GroupedWrites<JournalEntry[], JournalEntry[]>(
    (groups) => this.insertJournal(groups),
    (entries) => entries.length,
    JOURNAL_ENTRIES_PER_INSERT,
  );

  /** Pass claims that meet, one statement for them all. */
  private readonly passClaims = new GroupedWrites<string, ClaimedPass | null>((ids) => this.claimPasses(ids), () => 1, CLAIMS_PER_UPDATE);

  /** `blobs` holds artifacts' bytes: rows of this database unless another backend is given. */
  constructor(
    protected readonly db: SqlClient,
    private readonly blobs?: BlobBackend,
  ) {
    this.artifacts = new SqlArtifacts(db, blobs ?? new PostgresBlobs(db));
  }

  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    // The default backend's rows join the transaction; another backend is outside it anyway.
    return this.db.transaction((tx) => fn(new SqlStore(tx, this.blobs)));
  }

  close(): Promise<void> {
    this.blobs?.close?.();
    return this.db.close();
  }

  private async one(sql: string, params: unknown[]): Promise<Row | null> {
    return (await this.db.query<Row>(sql, params))[0] ?? null;
  }

  async createRun(run: NewRun): Promise<{ run: RunRecord; created: boolean }> {
    const inserted = await this.one(
      `insert into runs (id, project, workflow, interpreter, script, input, subject, parent_id, handler,
                         idempotency_key, status, wake_at, lenient, cwd, runner, rerun_of, rerun_from_step, submitted_by, schedule)
       values ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, 'pending', $11, $12, $13, $14::jsonb, $15, $16, $17, $18)
       on conflict do nothing returning *`,
      [
        run.id,
        run.project,
        run.workflow,
        run.interpreter,
        run.script,
        json(run.input ?? null),
        run.subject ?? null,
        run.parentId ?? null,
        run.handler ?? null,
        run.idempotencyKey ?? null,
        run.notBefore ?? null,
        run.lenient ?? false,
        run.cwd ?? null,
        run.runner ? json(run.runner) : null,
        run.rerunOf?.runId ?? null,
        run.rerunOf?.fromStep ?? null,
        run.submittedBy ?? null,
        run.schedule ?? null,
      ],
    );
    if (inserted) return { run: toRun(inserted), created: true };
    const existing = await this.one(
      `select * from runs where id = $1 or (project = $2 and idempotency_key = $3) limit 1`,
      [run.id, run.project, run.idempotencyKey ?? null],
    );
    if (!existing) throw new Error(`run ${run.id} could not be created nor found`);
    return { run: toRun(existing), created: false };
  }

  async getRun(id: string): Promise<RunRecord | null> {
    const row = await this.one(`select * from runs where id = $1`, [id]);
    return row ? toRun(row) : null;
  }

  async listRuns(filter: { project?: string; status?: RunStatus[]; parentId?: string; limit?: number } = {}) {
    const rows = await this.db.query<Row>(
      `select * from runs
        where ($1::text is null or project = $1)
          and ($2::text[] is null or status = any($2))
          and ($3::text is null or parent_id = $3)
        order by created_at desc, id limit $4`,
      [filter.project ?? null, filter.status ?? null, filter.parentId ?? null, filter.limit ?? 100],
    );
    return rows.map(toRun);
  }

  async listWaitingGateRuns(project: string): Promise<RunRecord[]> {
    // runs_due (status, wake_at) keeps this to the waiting runs, however large the archive.
    const rows = await this.db.query<Row>(
      `select * from runs where status = 'waiting' and project = $1 and parent_id is not null and input ? 'approval'
        order by created_at, id`,
      [project],
    );
    return rows.map(toRun);
  }

  async listUnfinishedRunStates(idPrefix: string): Promise<RunStates> {
    // runs_due (status, wake_at) keeps this to the unfinished runs, however large the archive.
    return this.runStatesRead(
      `select id, status, awaiting, wait, passes, error from runs
        where status in ('pending', 'running', 'waiting') and starts_with(id, $1)`,
      [idPrefix],
    );
  }

  async listRunStatesChangedSince(idPrefix: string, since: Date): Promise<RunStates> {
    // runs_updated (updated_at) keeps this to the runs changed, however many there are.
    return this.runStatesRead(
      `select id, status, awaiting, wait, passes, error from runs where updated_at >= $2 and starts_with(id, $1)`,
      [idPrefix, since],
    );
  }

  /**
   * Run states and the database's time of their read: now(), the start of the transaction both
   * are in, so before the read's snapshot. A change the read did not see has an updated_at at or
   * after it, unless its own transaction began before this one (which the caller's overlap covers).
   */
  private runStatesRead(sql: string, params: unknown[]): Promise<RunStates> {
    return this.db.transaction(async (tx) => {
      const [clock] = await tx.query<{ now: unknown }>('select now()');
      const rows = await tx.query<Row>(sql, params);
      return { states: rows.map(toRunState), readAt: date(clock?.now) };
    });
  }

  async listEventWaiters(project: string, type: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `select id from runs where project = $1 and status = 'waiting' and wait->>'kind' = 'event' and wait->>'type' = $2
        order by created_at, id limit 10000`,
      [project, type],
    );
    return rows.map((row) => row.id);
  }

  async deleteRunsFinishedBefore(before: Date, limit: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      // A tree goes whole or not at all: its root finished before the cutoff and nothing in it is
      // still going or newer, so no archived run ever points at a child that is gone.
      const rows = await tx.query<{ id: string }>(
        `with recursive tree (root, id, finished_at) as (
           select id, id, finished_at from runs where parent_id is null and finished_at < $1
           union all select t.root, c.id, c.finished_at from runs c join tree t on c.parent_id = t.id),
         roots as (
           select root from tree group by root
           having bool_and(finished_at is not null and finished_at < $1)
           order by min(finished_at) limit $2)
         select id from tree where root in (select root from roots)`,
        [before, limit],
      );
      const ids = rows.map((row) => row.id);
      if (ids.length === 0) return 0;
      for (const table of ['journal', 'signals', 'activities', 'run_logs', 'leases', 'gate_answers']) await tx.query(`delete from ${table} where run_id = any($1)`, [ids]);
      // Their artifacts' bytes (the PostgreSQL backend's rows) go with them: those the records
      // name, and any a crashed put left under the run's own key prefix (`RUN/…`).
      const artifacts = await tx.query<{ blob_key: string }>(`delete from artifacts where run_id = any($1) returning blob_key`, [ids]);
      await tx.query(
        `delete from artifact_parts p where p.blob_key = any($1) or exists (select 1 from unnest($2::text[]) as r(id) where starts_with(p.blob_key, r.id || '/'))`,
        [artifacts.map((row) => row.blob_key), ids],
      );
      // Bytes in another backend (S3) are outside the transaction: deleted before it commits, so
      // storage that is down rolls it back and the next pass tries the same runs again.
      if (this.blobs) for (const prefix of [...artifacts.map((row) => row.blob_key), ...ids.map((id) => `${id}/`)]) await this.blobs.deletePrefix(prefix);
      await tx.query(`delete from runs where id = any($1)`, [ids]);
      return ids.length;
    });
  }

  async openWaitsSince(now: Date): Promise<{ project: string; since: Date }[]> {
    // runs_due (status, wake_at) keeps this to the waiting runs.
    const rows = await this.db.query<{ project: string; since: unknown }>(
      `select project, min(coalesce(wake_at, updated_at)) as since from runs
        where status = 'waiting' and (wake_at is null or wake_at < $1)
        group by project order by project`,
      [now],
    );
    return rows.map((row) => ({ project: row.project, since: date(row.since) }));
  }

  async updateRun(id: string, patch: RunPatch): Promise<void> {
    const { sets, params } = runSets(id, patch);
    await this.db.query(`update runs set ${sets} where id = $1`, params);
  }

  async updateRunUnlessCancelled(id: string, patch: RunPatch): Promise<RunRecord | null> {
    const { sets, params } = runSets(id, patch);
    const row = await this.one(`update runs set ${sets} where id = $1 and status <> 'cancelled' returning *`, params);
    return row ? toRun(row) : null;
  }

  async finishRun(id: string, patch: RunPatch): Promise<{ run: RunRecord; holders: string[] } | null> {
    const { sets, params } = runSets(id, patch);
    // One round trip for what every ending run does (a run with no lease deletes nothing). Only a
    // queue the run held gets a new holder; leaving one it merely waited in changes nobody.
    const row = await this.one(
      `with ended as (update runs set ${sets} where id = $1 and status <> 'cancelled' returning *),
            released as (delete from leases l where run_id = $1 and exists (select 1 from ended)
                         returning l.project, l.grp,
                           not exists (select 1 from leases o where o.project = l.project and o.grp = l.grp and o.seq < l.seq) as held)
       select ended.*, (select coalesce(json_agg(json_build_object('project', project, 'grp', grp)), '[]') from released where held) as held_queues
         from ended`,
      params,
    );
    if (!row) return null;
    return { run: toRun(row), holders: await this.holdersOf(row.held_queues as Row[]) };
  }

  startPass(id: string): Promise<ClaimedPass | null> {
    return this.passClaims.add(id);
  }

  /** Claims of several due runs in one update (an executor's tick claims what it has room for). */
  private async claimPasses(ids: string[]): Promise<(ClaimedPass | null)[]> {
    // One run (most claims): its id as such, so the planner knows the journal's one partition to look in.
    const one = ids.length === 1;
    const rows = await this.db.query<Row>(
      `update runs set status = 'running', passes = passes + 1, wake_at = null, awaiting = null, wait = null,
              updated_at = now()
        where ${one ? 'id = $1' : 'id = any($1)'} and status in ('pending', 'waiting')
        returning *, exists (select 1 from journal where run_id = ${one ? '$1' : 'runs.id'}) as has_journal`,
      [one ? ids[0] : ids],
    );
    const claimed = new Map(rows.map((row) => [row.id as string, row]));
    return Promise.all(
      ids.map(async (id) => {
        const row = claimed.get(id);
        // A run asked for twice in one group was claimed once: the second ask gets nothing.
        claimed.delete(id);
        if (!row) return null;
        // Most passes are a run's first, with nothing recorded: no second round trip to read nothing.
        return { run: toRun(row), journal: row.has_journal ? await this.readJournal(id) : [] };
      }),
    );
  }

  async listDueRuns(now: Date, limit: number, shards?: ShardFilter): Promise<string[]> {
    // Woken runs first, then new ones, each oldest first: a run part-way (a signal, a sleep that
    // ended) must not wait behind a storm of new handler runs; it finishes what it started.
    // Of some shards only: a filter on the due runs the index finds, which only other replicas'
    // due runs (a share of a moment's due runs) are thrown away by.
    const rows = await this.db.query<Row>(
      `select id from runs
        where ((status = 'pending' and (wake_at is null or wake_at <= $1))
           or (status = 'waiting' and wake_at <= $1)) and ${inShards('id', 3)}
        order by status = 'pending', coalesce(wake_at, created_at), created_at limit $2`,
      [now, limit, ...shardParams(shards)],
    );
    return rows.map((row) => row.id as string);
  }

  async nextDueAt(): Promise<Date | null> {
    const row = await this.one(
      // One min per status: each is the first entry of runs_due (status, wake_at), where a min over
      // both statuses at once read the whole table.
      `select least(
         (select min(wake_at) from runs where status = 'pending'),
         (select min(wake_at) from runs where status = 'waiting'),
         (select min(next_attempt_at) from activities where status = 'queued'),
         (select min(next_at) from schedules where suspended_at is null)) as at`,
      [],
    );
    return dateOrNull(row?.at);
  }

  async wakeRun(id: string, now: Date): Promise<boolean> {
    const row = await this.one(
      `update runs set wake_at = $2 where id = $1 and status = 'waiting' and (wake_at is null or wake_at > $2)
       returning id`,
      [id, now],
    );
    return row !== null;
  }

  async recoverInterruptedRuns(now: Date, ids?: string[], shards?: ShardFilter): Promise<string[]> {
    const rows = await this.db.query<Row>(
      `update runs set status = 'waiting', awaiting = 'redispatch', wait = null, wake_at = $1, updated_at = now()
        where status = 'running' and ($2::text[] is null or id = any($2)) and ${inShards('id', 3)} returning id`,
      [now, ids ?? null, ...shardParams(shards)],
    );
    return rows.map((row) => row.id as string);
  }

  async readJournal(runId: string): Promise<JournalEntry[]> {
    const rows = await this.db.query<Row>(`select * from journal where run_id = $1 order by position, kind`, [runId]);
    return rows.map(toEntry);
  }

  async copyJournal(fromRunId: string, toRunId: string, beforePosition: number): Promise<number> {
    // Copied in the database, column for column: the data is the old run's, byte for byte, and the
    // pass that recorded an entry is the old run's pass (the new run's passes replay it).
    const rows = await this.db.query<Row>(
      `insert into journal (run_id, position, kind, verb, name, occurrence, data, recorded_at, pass)
       select $2, position, kind, verb, name, occurrence, data, recorded_at, pass from journal
        where run_id = $1 and position < $3 returning position`,
      [fromRunId, toRunId, beforePosition],
    );
    return rows.length;
  }

  async listReruns(runId: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(`select id from runs where rerun_of = $1 order by created_at, id`, [runId]);
    return rows.map((row) => row.id);
  }

  async readJournalTimes(runId: string): Promise<JournalTime[]> {
    const rows = await this.db.query<Row>(
      `select position, kind, recorded_at, pass from journal where run_id = $1 order by position, kind`,
      [runId],
    );
    return rows.map((row) => ({
      position: Number(row.position),
      kind: row.kind as JournalEntry['kind'],
      at: date(row.recorded_at),
      pass: row.pass === null || row.pass === undefined ? null : Number(row.pass),
    }));
  }

  async pageRuns(filter: RunPageFilter): Promise<RunPage> {
    const sort = filter.sort ?? '-created';
    const cursor = filter.before ? decodeCursor(filter.before, sort) : null;
    const { where, params } = runSearchWhere(filter);
    const at = params.length + 1;
    const order = runOrder(sort, at + 1);
    // One more than asked for says whether there is a next page.
    const rows = await this.db.query<Row>(
      `select *, ${order.keyText} as page_key from runs
        where ${where}
          and ($${at}::text[] is null or status = any($${at}))
          and ${order.after}
        order by ${order.orderBy} limit $${at + 3}`,
      [...params, filter.status ?? null, cursor?.[0] ?? null, cursor?.[1] ?? null, filter.limit + 1],
    );
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    const next = rows.length > filter.limit && last ? encodeCursor(sort, last.page_key as string, last.id as string) : null;
    return { runs: page.map(toRun), next };
  }

  async countRuns(search: RunSearch): Promise<Record<RunStatus, number>> {
    const { where, params } = runSearchWhere(search);
    const rows = await this.db.query<Row>(`select status, count(*)::int as runs from runs where ${where} group by status`, params);
    const counts = noRuns();
    for (const row of rows) counts[row.status as RunStatus] = Number(row.runs);
    return counts;
  }

  runStats(search: RunSearch & { since: Date; until: Date }, bucketMs: number): Promise<RunStats> {
    return queryRunStats(this.db, search, bucketMs);
  }

  async listWorkflows(project?: string): Promise<WorkflowSummary[]> {
    // A pipeline's jobs and items run as `name#job[i]`: they belong to their pipeline, not listed.
    const rows = await this.db.query<Row>(
      `select distinct on (workflow) workflow, interpreter, id, status, created_at,
              count(*) over (partition by workflow) as runs
         from runs
        where ($1::text is null or project = $1) and parent_id is null
        order by workflow, created_at desc, id desc`,
      [project ?? null],
    );
    return rows.map((row) => ({
      name: row.workflow as string,
      interpreter: row.interpreter as string,
      runs: Number(row.runs),
      lastRun: { id: row.id as string, status: row.status as RunStatus, createdAt: date(row.created_at) },
    }));
  }

  async appendJournal(entry: JournalEntry): Promise<JournalEntry> {
    const [written] = await this.journalWrites.add([entry]);
    return written!;
  }

  async appendJournalEntries(entries: JournalEntry[]): Promise<JournalEntry[]> {
    return entries.length === 0 ? [] : this.journalWrites.add(entries);
  }

  /**
   * One insert of several callers' entries (concurrent passes' steps: one commit for all). Each
   * entry's pass is its run's current one, the pass that reached the call and recorded it. Where
   * another writer was first, its entry stands and is answered instead.
   */
  private async insertJournal(groups: JournalEntry[][]): Promise<JournalEntry[][]> {
    const entries = groups.flat();
    const values = entries.map((_, i) => {
      const at = (n: number) => `$${i * JOURNAL_COLUMNS + n}`;
      return `(${at(1)}, ${at(2)}, ${at(3)}, ${at(4)}, ${at(5)}, ${at(6)}, ${at(7)}::jsonb, (select passes from runs where id = ${at(1)}))`;
    });
    const params = entries.flatMap((e) => [e.runId, e.position, e.kind, e.verb, e.name, e.occurrence, json(e.data)]);
    const rows = await this.db.query<Row>(
      `insert into journal (run_id, position, kind, verb, name, occurrence, data, pass) values ${values.join(', ')}
       on conflict do nothing returning *`,
      params,
    );
    const key = (e: JournalEntry) => `${e.position} ${e.kind} ${e.runId}`;
    const inserted = new Map(rows.map(toEntry).map((e) => [key(e), e]));
    const recorded = async (e: JournalEntry) =>
      inserted.get(key(e)) ??
      toEntry((await this.one(`select * from journal where run_id = $1 and position = $2 and kind = $3`, [e.runId, e.position, e.kind])) ?? {});
    return Promise.all(groups.map((group) => Promise.all(group.map(recorded))));
  }

  async sendSignal(runId: string, name: string, payload: string): Promise<void> {
    await this.db.query(`insert into signals (run_id, name, payload) values ($1, $2, $3)`, [runId, name, payload]);
  }

  async hasSignal(runId: string, name: string): Promise<boolean> {
    return (await this.one(`select 1 from signals where run_id = $1 and name = $2 limit 1`, [runId, name])) !== null;
  }

  async takeSignal(runId: string, name: string): Promise<string | null> {
    const row = await this.one(
      `delete from signals where seq = (
         select seq from signals where run_id = $1 and name = $2 order by seq limit 1 for update skip locked)
       returning payload`,
      [runId, name],
    );
    return row ? (row.payload as string) : null;
  }

  async emitEvent(event: Omit<EventRecord, 'seq' | 'emittedAt'>): Promise<EventRecord> {
    const row =
      (await this.one(
        `insert into events (id, project, type, subject, payload) values ($1, $2, $3, $4, $5::jsonb)
         on conflict (project, id) do nothing returning *`,
        [event.id, event.project, event.type, event.subject, json(event.payload ?? null)],
      )) ?? (await this.one(`select * from events where project = $1 and id = $2`, [event.project, event.id]));
    return toEvent(row ?? {});
  }

  async getEvent(project: string, id: string): Promise<EventRecord | null> {
    const row = await this.one(`select * from events where project = $1 and id = $2`, [project, id]);
    return row ? toEvent(row) : null;
  }

  async listEvents(project: string, type: string, page: { beforeSeq: number | null; limit: number }): Promise<EventRecord[]> {
    const rows = await this.db.query<Row>(
      `select * from events where project = $1 and type = $2 and ($3::bigint is null or seq < $3) order by seq desc limit $4`,
      [project, type, page.beforeSeq, page.limit],
    );
    return rows.map(toEvent);
  }

  async runSummaries(ids: string[]): Promise<RunSummary[]> {
    if (ids.length === 0) return [];
    return (await this.db.query<Row>(`select id, status, created_at from runs where id = any($1::text[])`, [ids])).map(toRunSummary);
  }

  async lastEventSeq(): Promise<number> {
    const row = await this.one(`select coalesce(max(seq), 0) as seq from events`, []);
    return Number(row?.seq ?? 0);
  }

  async findEvent(project: string, type: string, afterSeq: number, subject: string | null) {
    const row = await this.one(
      `select * from events where project = $1 and type = $2 and seq > $3
          and ($4::text is null or subject is null or subject = '' or subject = $4)
        order by seq limit 1`,
      [project, type, afterSeq, subject],
    );
    return row ? toEvent(row) : null;
  }

  async getCell(project: string, scope: string, key: string): Promise<Cell | null> {
    const row = await this.one(`select * from cells where project = $1 and scope = $2 and key = $3`, [
      project,
      scope,
      key,
    ]);
    return row ? toCell(row) : null;
  }

  async setCell(project: string, scope: string, key: string, value: string): Promise<Cell> {
    const row = await this.one(
      `insert into cells (project, scope, key, value) values ($1, $2, $3, $4)
       on conflict (project, scope, key)
       do update set value = excluded.value, version = cells.version + 1, updated_at = now() returning *`,
      [project, scope, key, value],
    );
    return toCell(row ?? {});
  }

  async addCell(project: string, scope: string, key: string, value: string): Promise<boolean> {
    const row = await this.one(
      `insert into cells (project, scope, key, value) values ($1, $2, $3, $4) on conflict do nothing returning key`,
      [project, scope, key, value],
    );
    return row !== null;
  }

  async incrCell(project: string, scope: string, key: string, by: number): Promise<Cell | null> {
    // numeric, not bigint: a counter never overflows into a database error.
    const row = await this.one(
      `insert into cells (project, scope, key, value) values ($1, $2, $3, $4::bigint::text)
       on conflict (project, scope, key) do update
         set value = (cells.value::numeric + $4::bigint)::text,
             version = cells.version + 1, updated_at = now()
         where cells.value ~ '^-?[0-9]+$'
       returning *`,
      [project, scope, key, by],
    );
    return row ? toCell(row) : null;
  }

  async casCell(project: string, scope: string, key: string, expected: string | null, next: string) {
    if (expected === null) return this.addCell(project, scope, key, next);
    const row = await this.one(
      `update cells set value = $5, version = version + 1, updated_at = now()
        where project = $1 and scope = $2 and key = $3 and value = $4 returning key`,
      [project, scope, key, expected, next],
    );
    return row !== null;
  }

  async deleteCell(project: string, scope: string, key: string): Promise<boolean> {
    const row = await this.one(`delete from cells where project = $1 and scope = $2 and key = $3 returning key`, [
      project,
      scope,
      key,
    ]);
    return row !== null;
  }

  async listCells(project: string, scope: string, prefix = ''): Promise<Cell[]> {
    const rows = await this.db.query<Row>(
      `select * from cells where project = $1 and scope = $2 and starts_with(key, $3) order by key`,
      [project, scope, prefix],
    );
    return rows.map(toCell);
  }

  private async leaseHolder(project: string, group: string): Promise<string | null> {
    const row = await this.one(`select run_id from leases where project = $1 and grp = $2 order by seq limit 1`, [
      project,
      group,
    ]);
    return row ? (row.run_id as string) : null;
  }

  async acquireLease(project: string, group: string, runId: string): Promise<string> {
    await this.db.query(`insert into leases (project, grp, run_id) values ($1, $2, $3) on conflict do nothing`, [
      project,
      group,
      runId,
    ]);
    return (await this.leaseHolder(project, group)) ?? runId;
  }

  async releaseLease(project: string, group: string, runId: string): Promise<string | null> {
    await this.db.query(`delete from leases where project = $1 and grp = $2 and run_id = $3`, [project, group, runId]);
    return this.leaseHolder(project, group);
  }

  /** The run that holds each of these queues now that its holder left, where one does. */
  private async holdersOf(queues: Row[]): Promise<string[]> {
    const holders: string[] = [];
    for (const queue of queues) {
      const holder = await this.leaseHolder(queue.project as string, queue.grp as string);
      if (holder) holders.push(holder);
    }
    return holders;
  }

  async createActivity(activity: NewActivity): Promise<void> {
    await this.db.query(
      `insert into activities (id, run_id, name, argv, cwd, requires, max_attempts, backoff_ms, retry_on_exit, status, next_attempt_at)
       values ($1, $2, $3, $4::jsonb, $5, $6::jsonb, $7, $8, $9::jsonb, 'queued', coalesce($10, now())) on conflict do nothing`,
      [
        activity.id,
        activity.runId,
        activity.name,
        json(activity.argv),
        activity.cwd,
        json(activity.requires),
        activity.maxAttempts,
        activity.backoffMs,
        json(activity.retryOnExit),
        activity.dueAt ?? null,
      ],
    );
  }

  async getActivity(id: string): Promise<ActivityRecord | null> {
    const row = await this.one(`select * from activities where id = $1`, [id]);
    return row ? toActivity(row) : null;
  }

  async listActivities(runId: string): Promise<ActivityRecord[]> {
    const rows = await this.db.query<Row>(`select * from activities where run_id = $1 order by created_at, id`, [runId]);
    return rows.map(toActivity);
  }

  async claimActivity(capabilities: string[], now: Date, shards?: ShardFilter): Promise<ActivityRecord | null> {
    const row = await this.one(
      `update activities set status = 'running', attempt = attempt + 1
        where id = (select id from activities
                     where status = 'queued' and next_attempt_at <= $1 and requires <@ $2::jsonb and ${inShards('run_id', 3)}
                     order by next_attempt_at, created_at limit 1 for update skip locked)
        returning *`,
      [now, json(capabilities), ...shardParams(shards)],
    );
    return row ? toActivity(row) : null;
  }

  async finishActivityAttempt(id: string, outcome: { result: ActivityResult; final: boolean; retryAt?: Date; attempt?: number }): Promise<boolean> {
    const status = outcome.final ? (outcome.result.exitCode === 0 ? 'succeeded' : 'failed') : 'queued';
    const rows = await this.db.query(
      `update activities set status = $2, result = $3::jsonb, next_attempt_at = coalesce($4, next_attempt_at)
        where id = $1 and ($5::integer is null or (attempt = $5 and status = 'running')) returning id`,
      [id, status, json(outcome.result), outcome.retryAt ?? null, outcome.attempt ?? null],
    );
    return rows.length > 0;
  }

  async requeueRunningActivities(shards?: ShardFilter): Promise<number> {
    const rows = await this.db.query(`update activities set status = 'queued' where status = 'running' and ${inShards('run_id', 1)} returning id`, shardParams(shards));
    return rows.length;
  }

  async nextActivityAt(): Promise<Date | null> {
    const row = await this.one(`select min(next_attempt_at) as at from activities where status = 'queued'`, []);
    return dateOrNull(row?.at);
  }

  async putHandler(handler: HandlerRecord): Promise<void> {
    await this.db.query(
      `insert into handlers (project, name, event_type, workflow, interpreter, script, cwd, runner)
       values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       on conflict (project, name) do update set event_type = excluded.event_type, workflow = excluded.workflow,
         interpreter = excluded.interpreter, script = excluded.script, cwd = excluded.cwd, runner = excluded.runner`,
      [handler.project, handler.name, handler.eventType, handler.workflow, handler.interpreter, handler.script, handler.cwd, handler.runner ? json(handler.runner) : null],
    );
  }

  async listHandlers(project: string, eventType?: string): Promise<HandlerRecord[]> {
    const rows = await this.db.query<Row>(
      `select * from handlers where project = $1 and ($2::text is null or event_type = $2) order by name`,
      [project, eventType ?? null],
    );
    return rows.map(toHandler);
  }

  async deleteHandler(project: string, name: string): Promise<boolean> {
    return (await this.one(`delete from handlers where project = $1 and name = $2 returning name`, [project, name])) !== null;
  }

  async putSchedule(schedule: Omit<ScheduleRecord, 'lastRunId' | 'skipped'>, options: { keepNextAt?: boolean } = {}): Promise<void> {
    await this.db.query(
      `insert into schedules (project, name, every_ms, cron, workflow, interpreter, script, cwd, next_at, runner, input, overlap)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12)
       on conflict (project, name) do update set every_ms = excluded.every_ms, cron = excluded.cron,
         workflow = excluded.workflow, interpreter = excluded.interpreter, script = excluded.script,
         cwd = excluded.cwd, runner = excluded.runner, input = excluded.input, overlap = excluded.overlap,
         next_at = case when $13::boolean and schedules.every_ms is not distinct from excluded.every_ms
                          and schedules.cron is not distinct from excluded.cron
                        then schedules.next_at else excluded.next_at end`,
      [
        schedule.project,
        schedule.name,
        schedule.everyMs,
        schedule.cron,
        schedule.workflow,
        schedule.interpreter,
        schedule.script,
        schedule.cwd,
        schedule.nextAt,
        schedule.runner ? json(schedule.runner) : null,
        schedule.input === undefined || schedule.input === null ? null : json(schedule.input),
        schedule.overlap ?? 'skip',
        options.keepNextAt === true,
      ],
    );
  }

  async listSchedules(project?: string): Promise<ScheduleRecord[]> {
    const rows = await this.db.query<Row>(
      `select * from schedules where ($1::text is null or project = $1) order by project, name`,
      [project ?? null],
    );
    return rows.map(toSchedule);
  }

  async deleteSchedule(project: string, name: string): Promise<boolean> {
    return (await this.one(`delete from schedules where project = $1 and name = $2 returning name`, [project, name])) !== null;
  }

  async suspendSchedule(project: string, name: string, at: Date): Promise<ScheduleRecord | null> {
    // Suspended once: a second suspend keeps the first time.
    const row = await this.one(
      `update schedules set suspended_at = coalesce(suspended_at, $3) where project = $1 and name = $2 returning *`,
      [project, name, at],
    );
    return row ? toSchedule(row) : null;
  }

  async resumeSchedule(project: string, name: string, nextAt: Date): Promise<ScheduleRecord | null> {
    // A schedule that was not suspended keeps its tick: resuming it changes nothing.
    const row = await this.one(
      `update schedules set next_at = case when suspended_at is null then next_at else $3 end, suspended_at = null
        where project = $1 and name = $2 returning *`,
      [project, name, nextAt],
    );
    return row ? toSchedule(row) : null;
  }

  async recentScheduleRuns(project: string, limit: number): Promise<Map<string, RunSummary[]>> {
    // Each schedule's newest runs from the runs_schedule index, not every run the project has.
    const rows = await this.db.query<Row>(
      `select schedules.name as schedule, recent.id, recent.status, recent.created_at from schedules
       cross join lateral (select id, status, created_at from runs
                            where runs.project = schedules.project and runs.schedule = schedules.name
                            order by created_at desc limit $2) as recent
       where schedules.project = $1 order by schedules.name, recent.created_at desc`,
      [project, limit],
    );
    const runs = new Map<string, RunSummary[]>();
    for (const row of rows) runs.set(row.schedule as string, [...(runs.get(row.schedule as string) ?? []), toRunSummary(row)]);
    return runs;
  }

  async dueSchedules(now: Date): Promise<ScheduleRecord[]> {
    const rows = await this.db.query<Row>(`select * from schedules where next_at <= $1 and suspended_at is null order by next_at`, [now]);
    return rows.map(toSchedule);
  }

  async claimScheduleTick(project: string, name: string, due: Date, nextAt: Date): Promise<boolean> {
    // Not once suspended: a suspend between reading the due schedules and claiming a tick wins.
    const claimed = await this.one(
      `update schedules set next_at = $4 where project = $1 and name = $2 and next_at = $3 and suspended_at is null returning name`,
      [project, name, due, nextAt],
    );
    return claimed !== null;
  }

  async noteScheduleTick(project: string, name: string, outcome: { runId: string } | { skipped: true }): Promise<void> {
    await this.db.query(
      `update schedules set last_run_id = coalesce($3, last_run_id),
         skipped = skipped + (case when $3::text is null then 1 else 0 end)
        where project = $1 and name = $2`,
      [project, name, 'runId' in outcome ? outcome.runId : null],
    );
  }

  async takeThrottleSlot(project: string, key: string, now: Date, request: ThrottleRequest) {
    return this.transaction(async (tx) => {
      const db = (tx as SqlStore).db;
      await db.query(`insert into throttles (project, key, tat) values ($1, $2, $3) on conflict do nothing`, [
        project,
        key,
        now,
      ]);
      const rows = await db.query<Row>(`select tat from throttles where project = $1 and key = $2 for update`, [project, key]);
      const tat = Math.max(date(rows[0]?.tat).getTime(), now.getTime());
      const at = new Date(Math.max(now.getTime(), tat - (request.burst - 1) * request.intervalMs));
      if (request.drop && at.getTime() > now.getTime()) return { at, admitted: false };
      await db.query(`update throttles set tat = $3 where project = $1 and key = $2`, [
        project,
        key,
        new Date(Math.max(tat, at.getTime()) + request.intervalMs),
      ]);
      return { at, admitted: true };
    });
  }

  async leaseQueue(project: string, group: string): Promise<string[]> {
    const rows = await this.db.query<Row>(`select run_id from leases where project = $1 and grp = $2 order by seq`, [
      project,
      group,
    ]);
    return rows.map((row) => row.run_id as string);
  }

  async answerGate(runId: string, answer: Omit<GateAnswerRecord, 'final' | 'at'>, needed = 1): Promise<GateClaim> {
    return this.transaction(async (tx) => (tx as SqlStore).claimGate(runId, answer, needed));
  }

  /** answerGate inside its transaction: a lock per gate makes each answer see every one before it. */
  private async claimGate(runId: string, answer: Omit<GateAnswerRecord, 'final' | 'at'>, needed: number): Promise<GateClaim> {
    await this.db.query(`select pg_advisory_xact_lock(hashtextextended('gate:' || $1, 0))`, [runId]);
    const before = await this.gateAnswers(runId);
    const insert = (final: boolean) =>
      this.db.query(`insert into gate_answers (run_id, decision, answered_by, via, form_values, final) values ($1, $2, $3, $4, $5, $6)`, [
        runId,
        answer.decision,
        answer.by,
        answer.via,
        answer.values === null ? null : JSON.stringify(answer.values),
        final,
      ]);
    const first = before.find((each) => each.final) ?? null;
    if (first) {
      // Late: kept, not final (the unique index on final rows holds this too).
      await insert(false);
      return { won: false, first, approvals: approvalsOf(before), duplicate: null };
    }
    // While approvals are being counted each person answers once; a second answer is not kept.
    const duplicate = answer.by === null ? undefined : before.find((each) => each.by === answer.by);
    if (duplicate) return { won: false, first: null, approvals: approvalsOf(before), duplicate };
    const won = answer.decision === 'reject' || before.length + 1 >= needed;
    await insert(won);
    const after = await this.gateAnswers(runId);
    return { won, first: after.find((each) => each.final) ?? null, approvals: approvalsOf(after), duplicate: null };
  }

  async gateAnswers(runId: string): Promise<GateAnswerRecord[]> {
    const rows = await this.db.query<Row>(`select * from gate_answers where run_id = $1 order by seq`, [runId]);
    return rows.map((row) => ({
      decision: row.decision === 'reject' ? 'reject' : 'approve',
      by: (row.answered_by as string | null) ?? null,
      via: row.via as string,
      at: date(row.answered_at),
      values: (typeof row.form_values === 'string' ? JSON.parse(row.form_values) : row.form_values) as Record<string, unknown> | null,
      final: row.final === true,
    }));
  }

  async appendLog(runId: string, pass: number, output: string | Uint8Array): Promise<void> {
    const bytes = typeof output === 'string' ? Buffer.from(output) : Buffer.from(output);
    const raw = isPlainText(bytes) ? null : bytes;
    await this.db.query(`insert into run_logs (run_id, pass, text, raw) values ($1, $2, $3, $4)`, [runId, pass, displayText(bytes), raw]);
  }

  async readLogs(runId: string, afterSeq = 0): Promise<LogLine[]> {
    const rows = await this.db.query<Row>(
      `select seq, pass, text, raw, logged_at from run_logs where run_id = $1 and seq > $2 order by seq`,
      [runId, afterSeq],
    );
    return rows.map((row) => ({
      seq: Number(row.seq),
      pass: Number(row.pass),
      text: row.text as string,
      ...(row.raw ? { base64: Buffer.from(row.raw as Uint8Array).toString('base64') } : {}),
      at: date(row.logged_at),
    }));
  }
}
