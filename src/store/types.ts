export type RunStatus = 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

/** What a waiting run waits for; the executor wakes it when this holds (or at `wakeAt`). */
export type Wait =
  | { kind: 'timer'; until: string }
  | { kind: 'signal'; name: string; deadline?: string }
  | { kind: 'event'; type: string; subject: string | null; afterSeq: number; deadline?: string }
  | { kind: 'lease'; group: string }
  | { kind: 'activity'; names: string[] }
  | { kind: 'child'; runId: string }
  /** Any one of these runs ending (a pipeline waiting on its jobs). */
  | { kind: 'children'; runIds: string[] };

export interface RunRecord {
  id: string;
  project: string;
  workflow: string;
  interpreter: string;
  script: string;
  input: unknown;
  subject: string | null;
  parentId: string | null;
  handler: string | null;
  idempotencyKey: string | null;
  status: RunStatus;
  awaiting: string | null;
  wait: Wait | null;
  wakeAt: Date | null;
  passes: number;
  error: string | null;
  outputs: Record<string, string>;
  lenient: boolean;
  cwd: string | null;
  runner: RunnerSettings | null;
  /** The run this one reran, and the step it reran from (null: from the top); null when not a rerun. */
  rerunOf: RerunOf | null;
  /** Who submitted it through the API, where the server knew (null: not known). */
  submittedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** Where a rerun came from (`spool rerun`, docs/testing-workflows.md). */
export interface RerunOf {
  runId: string;
  fromStep: string | null;
}

/** A run's state without its script, input and outputs (Store.listUnfinishedRunStates, listRunStatesChangedSince). */
export type RunState = Pick<RunRecord, 'id' | 'status' | 'awaiting' | 'wait' | 'passes' | 'error'>;

/**
 * Run states as one read found them, and when: the database's time of that read, which the next
 * read of what changed starts from (never a replica's clock, which differs from the others').
 */
export interface RunStates {
  states: RunState[];
  readAt: Date;
}

export interface NewRun {
  id: string;
  project: string;
  workflow: string;
  interpreter: string;
  script: string;
  input?: unknown;
  subject?: string | null;
  parentId?: string | null;
  handler?: string | null;
  idempotencyKey?: string | null;
  lenient?: boolean;
  cwd?: string | null;
  runner?: RunnerSettings | null;
  rerunOf?: RerunOf | null;
  submittedBy?: string | null;
  /** The schedule whose tick (or `spool schedule trigger`) started it. */
  schedule?: string | null;
  /** A run that should not start before this time (throttled submits). */
  notBefore?: Date | null;
}

export type RunPatch = Partial<
  Pick<RunRecord, 'status' | 'awaiting' | 'wait' | 'wakeAt' | 'error' | 'finishedAt' | 'outputs'>
>;

export type JournalKind = 'call' | 'result';

export interface JournalEntry {
  runId: string;
  position: number;
  kind: JournalKind;
  verb: string;
  name: string;
  occurrence: number;
  data: Record<string, unknown>;
}

/** A run claimed for a new pass (Store.startPass), with the journal that pass starts from. */
export interface ClaimedPass {
  run: RunRecord;
  journal: JournalEntry[];
}

export interface EventRecord {
  seq: number;
  id: string;
  project: string;
  type: string;
  subject: string | null;
  payload: unknown;
  emittedAt: Date;
}

export interface Cell {
  key: string;
  value: string;
  version: number;
}

export type ActivityStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export type ActivityResult = ActivityOutput & {
  exitCode: number;
  attempts: number;
  /** A failed attempt's stderr tail (common/stderr-tail.ts), for people: a wait never returns it. */
  stderrTail?: string;
};

/**
 * What an attempt's command printed, as a step's is kept: text, or its bytes as base64 where they
 * are not plain text (a NUL, bytes that are not UTF-8), which a JSON string in PostgreSQL cannot hold.
 */
export type ActivityOutput = { stdout: string } | { stdoutBase64: string };

export interface ActivityRecord {
  id: string;
  runId: string;
  name: string;
  argv: string[];
  cwd: string | null;
  requires: string[];
  maxAttempts: number;
  backoffMs: number;
  retryOnExit: number[] | null;
  attempt: number;
  status: ActivityStatus;
  nextAttemptAt: Date;
  result: ActivityResult | null;
}

export type NewActivity = Pick<
  ActivityRecord,
  'id' | 'runId' | 'name' | 'argv' | 'cwd' | 'requires' | 'maxAttempts' | 'backoffMs' | 'retryOnExit'
> & {
  /** When its first attempt is due: the host's now (the database's when absent), as its retries are. */
  dueAt?: Date;
};

/** One answer to an approval gate (its gate's run), as kept: the first is final, later ones are kept too. */
export interface GateAnswerRecord {
  decision: 'approve' | 'reject';
  by: string | null;
  /** What it came through: cli, page, api, slack, mattermost. */
  via: string;
  at: Date;
  values: Record<string, unknown> | null;
  final: boolean;
}

/**
 * What recording an answer to a gate did: `won` when it decided the gate (the first rejection, or
 * the approval that made the count); `duplicate` is the person's earlier answer when this one was
 * refused, and not kept, for it.
 */
export interface GateClaim {
  won: boolean;
  /** The final answer, once there is one. */
  first: GateAnswerRecord | null;
  /** The approvals counted so far (all of them, the final one last, once the gate opened). */
  approvals: GateAnswerRecord[];
  duplicate: GateAnswerRecord | null;
}

export interface LogLine {
  seq: number;
  pass: number;
  /** What a person reads: UTF-8, with a NUL or a byte that is not text as U+FFFD. */
  text: string;
  /** The exact bytes, where they are not plain text (NUL, not UTF-8). */
  base64?: string;
  /** When the agent sent it (the store's clock). */
  at: Date;
}

export interface ScriptSource {
  workflow: string;
  interpreter: string;
  script: string;
  cwd: string | null;
  /**
   * What passes need from the workflow besides its script, opaque to the engine: on a cluster, the
   * Workflow's image, env and service account (src/operator/workflow-source.ts). Null locally.
   */
  runner?: RunnerSettings | null;
}

export type RunnerSettings = Record<string, unknown>;

export interface HandlerRecord extends ScriptSource {
  project: string;
  name: string;
  eventType: string;
}

export interface ScheduleRecord extends ScriptSource {
  project: string;
  name: string;
  everyMs: number | null;
  cron: string | null;
  nextAt: Date;
  lastRunId: string | null;
  skipped: number;
  /** The input of the runs it starts; null gives each run its tick (`{schedule, tick}`). */
  input?: unknown;
  /** `skip` (the default): a tick while the last run goes on starts nothing; `allow`: it starts one anyway. */
  overlap?: 'skip' | 'allow';
  /** Since when it is suspended (no ticks until resumed); null or absent: it ticks. */
  suspendedAt?: Date | null;
}

export interface ThrottleRequest {
  /** Starts are spaced this far apart. */
  intervalMs: number;
  /** This many may start together after a quiet spell. */
  burst: number;
  /** Refuse (and take no slot) rather than answer a later start time. */
  drop: boolean;
}

/** When a journal entry was written, and by which pass of its run (null: written before passes were kept). */
export interface JournalTime {
  position: number;
  kind: JournalKind;
  at: Date;
  pass: number | null;
}

export type { RunSort } from '../api/responses.js';
import type { RunSort } from '../api/responses.js';

/** Which runs the runs list holds, whatever their status (what the counts per status count). */
export interface RunSearch {
  project?: string;
  workflow?: string;
  subject?: string;
  parentId?: string;
  /** Only runs that no other run started (not a pipeline's jobs, nor spawned or called runs). */
  rootsOnly?: boolean;
  /**
   * Text found, case-insensitively, in the run's id, workflow, subject, input or outputs (as JSON
   * text), or in a step's `--label` or an annotation of its journal.
   */
  text?: string;
  /** Created at or after this time. */
  since?: Date;
  /** Created before this time. */
  until?: Date;
}

/** Which runs a page of the runs list holds, and in what order (newest first by default). */
export interface RunPageFilter extends RunSearch {
  status?: RunStatus[];
  sort?: RunSort;
  /** The `next` of the page before (of the same sort). */
  before?: string;
  limit: number;
}

export interface RunPage {
  runs: RunRecord[];
  /** Where the next (older) page starts; null on the last page. */
  next: string | null;
}

/** Every status at 0: a count per status names each of them, 0 included. */
export const noRuns = (): Record<RunStatus, number> => ({ pending: 0, running: 0, waiting: 0, succeeded: 0, failed: 0, cancelled: 0 });

/** Runs over a window (Store.runStats): created per slice by their status now, and how long the finished ones took. */
export interface RunStats {
  buckets: { start: Date; counts: Record<RunStatus, number> }[];
  /** Percentiles of created-to-finished, in ms; null when none finished. */
  durations: { runs: number; p50Ms: number; p90Ms: number; p99Ms: number; maxMs: number } | null;
}

/** A run in a list of what started it (a schedule's last runs, a handler's events). */
export type RunSummary = Pick<RunRecord, 'id' | 'status' | 'createdAt'>;

/** A workflow as the runs it has show it: runs that no other run started, by workflow name. */
export interface WorkflowSummary {
  name: string;
  interpreter: string;
  runs: number;
  lastRun: { id: string; status: RunStatus; createdAt: Date };
}
