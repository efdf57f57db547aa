import type { ShardFilter } from './run-shards.js';
import type {
  ActivityRecord,
  ActivityResult,
  Cell,
  EventRecord,
  GateAnswerRecord,
  GateClaim,
  HandlerRecord,
  ScheduleRecord,
  ThrottleRequest,
  JournalEntry,
  ClaimedPass,
  JournalTime,
  LogLine,
  NewActivity,
  NewRun,
  RunPatch,
  RunPage,
  RunPageFilter,
  RunRecord,
  RunSearch,
  RunStats,
  RunStates,
  RunStatus,
  RunSummary,
  WorkflowSummary,
} from './types.js';
import type { ArtifactStore } from './artifacts/types.js';

export type * from './types.js';

/**
 * Everything the engine keeps. Two drivers implement it over the same SQL (PostgreSQL through pg,
 * embedded PostgreSQL through PGlite); `transaction` gives a Store whose calls commit together.
 */
export interface Store {
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Files runs keep between passes (`spool artifact`): metadata here, bytes in its blob backend. */
  readonly artifacts: ArtifactStore;

  /** Inserts the run, or answers the existing one with the same id or idempotency key. */
  createRun(run: NewRun): Promise<{ run: RunRecord; created: boolean }>;
  getRun(id: string): Promise<RunRecord | null>;
  listRuns(filter?: { project?: string; status?: RunStatus[]; parentId?: string; limit?: number }): Promise<RunRecord[]>;
  updateRun(id: string, patch: RunPatch): Promise<void>;
  /** updateRun, unless the run was cancelled meanwhile: answers the run as updated, or null (cancelled, or gone). */
  updateRunUnlessCancelled(id: string, patch: RunPatch): Promise<RunRecord | null>;
  /**
   * Ends a run (updateRunUnlessCancelled with its final status) and, in the same statement, takes
   * it out of every lease queue it is in: answers the run and the runs that became holders,
   * or null when it was cancelled meanwhile (or is gone) and nothing changed.
   */
  finishRun(id: string, patch: RunPatch): Promise<{ run: RunRecord; holders: string[] } | null>;
  /**
   * The unfinished runs whose id starts with `idPrefix`, with only what their state is made of (no
   * script, input or outputs), and the database's time of the read.
   */
  listUnfinishedRunStates(idPrefix: string): Promise<RunStates>;
  /**
   * The runs whose id starts with `idPrefix` whose state was written at or after `since` (in the
   * database's time: a `readAt` of an earlier read), finished ones too, and the time of this read.
   * Its cost follows the runs changed, not the runs there are.
   */
  listRunStatesChangedSince(idPrefix: string, since: Date): Promise<RunStates>;
  /**
   * Per project, since when its oldest open-ended wait has lasted: a waiting run with no wake time
   * (a wait without a timeout: signal, event, approval, lease, child) since it was suspended (its
   * last change), or one whose wake time passed before `now`, since that wake time.
   */
  openWaitsSince(now: Date): Promise<{ project: string; since: Date }[]>;
  /**
   * Retention of the archive: deletes up to `limit` runs that finished before `before` (roots whose
   * runs have all finished, with their child runs), their journals, signals, activities and logs.
   * Answers how many runs went.
   */
  deleteRunsFinishedBefore(before: Date, limit: number): Promise<number>;
  /**
   * The waiting runs of a project whose wait is for an event of this type (oldest first): asked
   * for every event, so it selects in the database rather than reading every waiting run.
   */
  listEventWaiters(project: string, type: string): Promise<string[]>;
  /** The waiting approval gates of a project (runs a pipeline started whose input names an approval), oldest first. */
  listWaitingGateRuns(project: string): Promise<RunRecord[]>;
  /**
   * Claims a due run for a new pass: its status becomes running and `passes` grows by one. Answers
   * the run with its journal as the pass starts from, or null when the run was not due.
   */
  startPass(id: string): Promise<ClaimedPass | null>;
  /** Runs that may start a pass now: pending or waiting with `wakeAt` reached (of these shards only, if given). */
  listDueRuns(now: Date, limit: number, shards?: ShardFilter): Promise<string[]>;
  /** The earliest time something becomes due: a run's wake time, an activity's next attempt, a schedule's tick. */
  nextDueAt(): Promise<Date | null>;
  /** Makes a waiting run due now if its wait matches (see Store callers for the filters). */
  wakeRun(id: string, now: Date): Promise<boolean>;
  /** Runs left `running` by a process that died: make them due so their pass is re-dispatched (of these shards only, if given). */
  recoverInterruptedRuns(now: Date, ids?: string[], shards?: ShardFilter): Promise<string[]>;

  readJournal(runId: string): Promise<JournalEntry[]>;
  /** When each entry of the journal was written and by which pass (the run page's timeline). */
  readJournalTimes(runId: string): Promise<JournalTime[]>;
  /** One page of the runs list, newest first; `before` is the `next` of the page before. */
  pageRuns(filter: RunPageFilter): Promise<RunPage>;
  /** How many runs the search finds in each status (the runs list's counts; every status named, 0 included). */
  countRuns(search: RunSearch): Promise<Record<RunStatus, number>>;
  /** Runs the search finds between `since` and `until`: created per slice of `bucketMs`, by status, and percentiles of how long the finished took. */
  runStats(search: RunSearch & { since: Date; until: Date }, bucketMs: number): Promise<RunStats>;
  /** The workflows that runs were started from (not counting runs other runs started). */
  listWorkflows(project?: string): Promise<WorkflowSummary[]>;
  /** Copies a run's journal entries before `beforePosition` to another run (a rerun's prefix); answers how many. */
  copyJournal(fromRunId: string, toRunId: string, beforePosition: number): Promise<number>;
  /** The runs that reran this one, oldest first. */
  listReruns(runId: string): Promise<string[]>;
  /** Insert-only; a second write of the same position and kind is ignored and the first returned. */
  appendJournal(entry: JournalEntry): Promise<JournalEntry>;
  /** appendJournal of several entries of one run in one statement, so one commit: a fresh step's call and result. */
  appendJournalEntries(entries: JournalEntry[]): Promise<JournalEntry[]>;

  sendSignal(runId: string, name: string, payload: string): Promise<void>;
  hasSignal(runId: string, name: string): Promise<boolean>;
  /** Removes and answers the oldest queued signal of that name, or null. */
  takeSignal(runId: string, name: string): Promise<string | null>;

  emitEvent(event: Omit<EventRecord, 'seq' | 'emittedAt'>): Promise<EventRecord>;
  /** An event by its id, which is unique within its project (the same id elsewhere is another event). */
  getEvent(project: string, id: string): Promise<EventRecord | null>;
  lastEventSeq(): Promise<number>;
  /** Events of `type` before the event `beforeSeq` (null: the newest), newest first, `limit` of them. */
  listEvents(project: string, type: string, page: { beforeSeq: number | null; limit: number }): Promise<EventRecord[]>;
  /** The runs of these ids that exist, with only their status and when they were made (any order). */
  runSummaries(ids: string[]): Promise<RunSummary[]>;
  /** The first event of `type` after `afterSeq` whose subject is `subject` or empty (any, if subject is null). */
  findEvent(project: string, type: string, afterSeq: number, subject: string | null): Promise<EventRecord | null>;

  getCell(project: string, scope: string, key: string): Promise<Cell | null>;
  setCell(project: string, scope: string, key: string, value: string): Promise<Cell>;
  /** Claims the key: true if this call created it, false if it was taken. */
  addCell(project: string, scope: string, key: string, value: string): Promise<boolean>;
  /** Adds `by` to a whole number (an absent cell counts as 0); null, and nothing changed, when the cell holds anything else. */
  incrCell(project: string, scope: string, key: string, by: number): Promise<Cell | null>;
  /** Sets `next` if the value is `expected` (null: the cell is absent). */
  casCell(project: string, scope: string, key: string, expected: string | null, next: string): Promise<boolean>;
  deleteCell(project: string, scope: string, key: string): Promise<boolean>;
  listCells(project: string, scope: string, prefix?: string): Promise<Cell[]>;

  /** Joins the group's queue (once) and answers the run that holds it now. */
  acquireLease(project: string, group: string, runId: string): Promise<string>;
  /** Leaves the queue; answers the run that holds the group next, if any. */
  releaseLease(project: string, group: string, runId: string): Promise<string | null>;

  createActivity(activity: NewActivity): Promise<void>;
  getActivity(id: string): Promise<ActivityRecord | null>;
  listActivities(runId: string): Promise<ActivityRecord[]>;
  /** Takes one queued activity that is due and needs only `capabilities`; marks it running. */
  claimActivity(capabilities: string[], now: Date, shards?: ShardFilter): Promise<ActivityRecord | null>;
  /**
   * Ends an attempt: either final (`result`) or queued again at `retryAt`. With `attempt`, only
   * while that attempt is the one running: a late report of a superseded attempt, or a second
   * report of the same one, changes nothing and answers false.
   */
  finishActivityAttempt(id: string, outcome: { result: ActivityResult; final: boolean; retryAt?: Date; attempt?: number }): Promise<boolean>;
  /** Activities left running by a process that died go back to the queue. */
  requeueRunningActivities(shards?: ShardFilter): Promise<number>;
  nextActivityAt(): Promise<Date | null>;

  putHandler(handler: HandlerRecord): Promise<void>;
  listHandlers(project: string, eventType?: string): Promise<HandlerRecord[]>;
  deleteHandler(project: string, name: string): Promise<boolean>;

  /**
   * Creates or replaces a schedule (what ran is kept). With `keepNextAt`, one already there keeps
   * its next tick unless its cadence (everyMs, cron) changes: decided in the write itself, so a
   * tick claimed meanwhile is not made due again.
   */
  putSchedule(schedule: Omit<ScheduleRecord, 'lastRunId' | 'skipped'>, options?: { keepNextAt?: boolean }): Promise<void>;
  listSchedules(project?: string): Promise<ScheduleRecord[]>;
  deleteSchedule(project: string, name: string): Promise<boolean>;
  /** Suspends a schedule from `at` (it makes no ticks until resumed); its record as now, or null when there is none. */
  suspendSchedule(project: string, name: string, at: Date): Promise<ScheduleRecord | null>;
  /** Resumes a schedule with its next tick at `nextAt`; its record as now, or null when there is none. */
  resumeSchedule(project: string, name: string, nextAt: Date): Promise<ScheduleRecord | null>;
  /** The last `limit` runs each schedule of the project started, newest first, by schedule name. */
  recentScheduleRuns(project: string, limit: number): Promise<Map<string, RunSummary[]>>;
  /** Schedules whose next tick is due (suspended ones never are). */
  dueSchedules(now: Date): Promise<ScheduleRecord[]>;
  /**
   * Moves a schedule from its due tick to the next one; true for exactly one caller per due tick,
   * however many executors (replicas, a leader stepping down) look at it at once.
   */
  claimScheduleTick(project: string, name: string, due: Date, nextAt: Date): Promise<boolean>;
  /** Notes the run a claimed tick started, or that it was skipped. */
  noteScheduleTick(project: string, name: string, outcome: { runId: string } | { skipped: true }): Promise<void>;

  /**
   * When the next run under a throttle key may start: now, or later to keep starts `intervalMs`
   * apart beyond the burst. With `drop`, a late slot is refused (`admitted: false`) and not taken.
   */
  takeThrottleSlot(project: string, key: string, now: Date, request: ThrottleRequest): Promise<{ at: Date; admitted: boolean }>;
  /** The runs holding or queued for a lease group, in arrival order. */
  leaseQueue(project: string, group: string): Promise<string[]>;

  /**
   * Records an answer to the gate whose run is `runId`, one at a time per gate: the first rejection,
   * or the approval that makes `needed` approvals from distinct people, is final (won); one after
   * the final is kept beside it, not final; a person's second answer before it is refused, not kept.
   */
  answerGate(runId: string, answer: Omit<GateAnswerRecord, 'final' | 'at'>, needed?: number): Promise<GateClaim>;
  /** Every answer to the gate, in the order they came. */
  gateAnswers(runId: string): Promise<GateAnswerRecord[]>;
  /** A piece of a pass's output: text, or bytes (kept exactly where they are not plain text). */
  appendLog(runId: string, pass: number, output: string | Uint8Array): Promise<void>;
  readLogs(runId: string, afterSeq?: number): Promise<LogLine[]>;
}
