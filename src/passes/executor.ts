import { ensureError } from '../common/errors.js';
import { maxValueBytes } from '../engine/limits.js';
import type { Change, PassHost } from '../engine/pass.js';
import { eventArrived } from '../engine/events.js';
import { tickSchedules } from '../engine/schedules.js';
import { settleRun, type RunOutcome } from '../engine/settle.js';
import { wakeIfOver } from '../engine/wake.js';
import type { ShardFilter } from '../store/run-shards.js';
import type { Store } from '../store/store.js';
import { TERMINAL_STATUSES, type ActivityRecord, type ClaimedPass, type RunRecord } from '../store/types.js';
import { runActivityAttempt } from '../activities/activity-runner.js';
import { settleActivityAttempt, type AttemptEnd } from '../activities/activity-attempts.js';
import { projectOfRunId } from '../common/ids.js';
import { startPass, type PassOutput, type PassPlace, type PassRunner } from './start-pass.js';
import { tracing, type CallEnd } from '../tracing/tracing.js';

/** Runs one attempt of an activity somewhere else (on a cluster, a Job) and answers how it ended. */
export type ActivityAttemptRunner = (activity: ActivityRecord, signal: AbortSignal) => Promise<AttemptEnd>;

export interface ExecutorOptions {
  output(run: RunRecord): PassOutput;
  /** Where script passes run (pipeline coordinators always run here, in-process). */
  runPass?: PassRunner;
  /** When set, activities do not run here, and a script that submits one is told this. */
  noActivities?: string;
  /** Where activity attempts run (a child process here unless given). */
  runActivity?: ActivityAttemptRunner;
  /** Who offers capabilities, as a refusal names them ('no agent here offers' unless given). */
  capabilitiesOfferedBy?: string;
  /** Why an activity requiring these cannot run here though each is offered (PassHost.activityRefusal). */
  activityRefusal?: (requires: readonly string[]) => string | null;
  /** When set, a fan_out body is never read from a file here (PassHost.noWorkflowFiles). */
  noWorkflowFiles?: string;
  /** Workflows stored by name, a child's source when a script names no file (PassHost.storedWorkflow). */
  storedWorkflow?: PassHost['storedWorkflow'];
  /** `spool test`'s stubs of steps and http nodes (PassHost.stubs). */
  stubs?: PassHost['stubs'];
  /** Start runs for due schedules (the dev server does; `spool run` does not). */
  schedules?: boolean;
  /** Only runs this answers true for are executed (spool run: its run and that run's children). */
  owns?(runId: string): Promise<boolean>;
  /** Only due runs and queued activities of these shards are dispatched (an operator replica's shards, asked each tick); absent: every run's. */
  shards?: () => ShardFilter | undefined;
  /** Called after each pass has been settled onto its run. */
  onPassEnd?(run: RunRecord): void;
  /** What went wrong in the loop (stderr unless given: the operator logs it as a JSON line). */
  onError?(message: string, error: unknown, runId?: string): void;
  /** How many passes run at once here (16 unless set; the operator's --max-running-passes). */
  maxConcurrentPasses?: number;
  /** How many of those one project may have at once (undefined: no cap but the total's). */
  passQuota?: (project: string) => Promise<number | undefined>;
  pollMs?: number;
  /** What activities may ask for here: a list, or asked afresh each time (a cluster's ActivityClasses). */
  capabilities?: string[] | (() => readonly string[]);
  maxResultBytes?: number;
  lenient?: boolean;
  /** Each script pass in a new, empty working directory, as on a cluster (PassOptions.freshDir). */
  freshDir?: boolean;
  env?: string;
  now?: () => Date;
}

/** The longest wait between ticks while the store is away. */
const MAX_TICK_BACKOFF_MS = 5_000;

/**
 * The abort reason of passes whose executor was abandoned (its operator stopped leading): they are
 * left unsettled, for the next leader to dispatch again.
 */
export const ABANDONED = 'executor abandoned';

export const LOCAL_CAPABILITIES = ['shell', 'polyglot'];

/**
 * Starts passes of due runs (as child processes, or wherever `runPass` puts them) and runs queued
 * activities. Everything it knows is in the store, so a new executor on the same store carries on.
 */
export class Executor {
  private readonly running = new Map<string, AbortController>();
  /** Attempts under way here, by activity id, with their run. */
  private readonly activities = new Map<string, { runId: string; abort: AbortController }>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private ticking = false;
  /** Runs whose pass ended while the store could not be reached: made due again (to replay) once it can. */
  private readonly unsettled = new Set<string>();
  /** Ticks failed in a row (the store is away): the next one backs off, and the error is said once. */
  private failedTicks = 0;
  private lastTickError = '';
  private again = false;
  /** Changes whose waiters are being woken (onChange). */
  private waking = 0;
  private readonly idle: (() => void)[] = [];
  readonly host: PassHost;
  private readonly place: PassPlace;

  constructor(
    private readonly store: Store,
    private readonly options: ExecutorOptions,
  ) {
    const offered = options.capabilities ?? LOCAL_CAPABILITIES;
    this.host = {
      now: options.now ?? (() => new Date()),
      get capabilities() {
        return typeof offered === 'function' ? offered() : offered;
      },
      ...(options.capabilitiesOfferedBy ? { capabilitiesOfferedBy: options.capabilitiesOfferedBy } : {}),
      ...(options.activityRefusal ? { activityRefusal: options.activityRefusal } : {}),
      ...(options.noActivities ? { noActivities: options.noActivities } : {}),
      ...(options.noWorkflowFiles ? { noWorkflowFiles: options.noWorkflowFiles } : {}),
      ...(options.storedWorkflow ? { storedWorkflow: options.storedWorkflow } : {}),
      ...(options.stubs ? { stubs: options.stubs } : {}),
      maxResultBytes: options.maxResultBytes ?? maxValueBytes(),
      env: options.env ?? 'dev',
      notify: (change) => this.onChange(change),
    };
    this.place = {
      output: (run) => options.output(run),
      ...(options.runPass ? { elsewhere: options.runPass } : {}),
      ...(options.lenient ? { lenient: true } : {}),
      ...(options.freshDir ? { freshDir: true } : {}),
    };
  }

  start(): void {
    this.stopped = false;
    this.poke();
  }

  /** Stops starting passes and waits for the ones under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.idleNow();
  }

  /**
   * Stops at once, without settling the passes under way: their runs stay running in the store,
   * and whoever executes next recovers them (`recoverInterruptedRuns`) and they replay.
   */
  async abandon(patienceMs = 5000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const abort of [...this.running.values(), ...[...this.activities.values()].map((each) => each.abort)]) abort.abort(ABANDONED);
    // Passes unwind at once when aborted (a pipeline coordinator may take longer: not waited for).
    await Promise.race([this.idleNow(), new Promise<void>((resolve) => setTimeout(resolve, patienceMs).unref())]);
  }

  /**
   * Stops, without settling them, the passes and activity attempts of some runs only (an operator
   * replica lost their shard): as abandon() does, and the executor carries on with the others.
   */
  async abandonRuns(which: (runId: string) => boolean, patienceMs = 5000): Promise<void> {
    for (const [id, abort] of this.running) if (which(id)) abort.abort(ABANDONED);
    for (const { runId, abort } of this.activities.values()) if (which(runId)) abort.abort(ABANDONED);
    // Their new executor recovers them; recovering them from here would end its passes.
    for (const id of this.unsettled) if (which(id)) this.unsettled.delete(id);
    const underWay = (): boolean => [...this.running.keys()].some(which) || [...this.activities.values()].some(({ runId }) => which(runId));
    await Promise.race([this.idleNow(underWay), new Promise<void>((resolve) => setTimeout(resolve, patienceMs).unref())]);
  }

  /** Settles once no pass and no activity is under way (of those `underWay` looks at, if given). */
  private async idleNow(underWay = (): boolean => this.running.size > 0 || this.activities.size > 0): Promise<void> {
    while (underWay()) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Looks for work now rather than at the next poll. */
  poke(): void {
    if (this.stopped) return;
    if (this.ticking) this.again = true;
    else this.tickIn(0);
  }

  /** The one timer of the loop: a tick runs only from it, so two ticks never run at once. */
  private tickIn(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, ms);
  }

  private onChange(change: Change): void {
    this.waking += 1;
    void this.wakeWaiters(change)
      .finally(() => (this.waking -= 1))
      .then(() => this.poke());
  }

  /**
   * Nothing is under way here: no pass, no activity attempt, no tick, no waiters being woken.
   * `spool test` moves its clock only then (src/testing).
   */
  get quiet(): boolean {
    return this.running.size === 0 && this.activities.size === 0 && !this.ticking && !this.again && this.waking === 0;
  }

  /** The runs with a pass under way here. */
  runsUnderWay(): string[] {
    return [...this.running.keys()];
  }

  /** Ends the script of a run's pass under way here, and its activity attempts (the run was cancelled). */
  abortPass(runId: string): void {
    this.running.get(runId)?.abort();
    for (const attempt of this.activities.values()) if (attempt.runId === runId) attempt.abort.abort();
  }

  /** Wakes runs whose wait a change may have ended; an event also starts its handlers' runs. */
  private async wakeWaiters(change: Change): Promise<void> {
    const now = this.host.now();
    if (change.kind === 'lease-holder') {
      await wakeIfOver(this.store, change.runId, now);
    } else if (change.kind === 'event') {
      const event = await this.store.getEvent(change.project, change.id);
      if (!event) return;
      await eventArrived(this.store, this.host.env, event, now);
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    // Until the next tick is set: a poke meanwhile (even while the store is asked when work is
    // next due) only asks this loop to go round again.
    this.ticking = true;
    let delay = 0;
    try {
      if (this.unsettled.size > 0) await this.recoverUnsettled();
      // One time for the whole tick: what was due by then has been looked at, and untilNextDue
      // tells it from what came due since.
      const now = this.host.now();
      if (this.options.schedules) await tickSchedules(this.store, this.host.env, now);
      await this.dispatchRuns(now);
      if (!this.options.noActivities) await this.dispatchActivities(now);
      if (!this.again) delay = await this.untilNextDue(now);
      if (this.failedTicks > 0) process.stderr.write(`spool: executor: the store answers again after ${this.failedTicks} failed ticks\n`);
      this.failedTicks = 0;
      this.lastTickError = '';
    } catch (error) {
      // A store that is away fails every tick the same way: said once, retried with backoff.
      const message = ensureError(error).message;
      if (message !== this.lastTickError) this.reportError('executor tick failed', error);
      this.lastTickError = message;
      this.failedTicks += 1;
      const poll = this.options.pollMs ?? 250;
      delay = Math.min(MAX_TICK_BACKOFF_MS, poll * 2 ** Math.min(this.failedTicks - 1, 10)) * (0.8 + Math.random() * 0.4);
    } finally {
      this.ticking = false;
    }
    if (this.again) delay = 0;
    this.again = false;
    if (!this.stopped) this.tickIn(delay);
  }

  /**
   * Sleeps until the next wake time, backoff or tick the store knows of, and at most one poll
   * interval (another process may have added work to a shared store).
   */
  private async untilNextDue(lookedAt: Date): Promise<number> {
    const poll = this.options.pollMs ?? 250;
    const next = await this.store.nextDueAt().catch(() => null);
    if (!next) return poll;
    // Work due by the time this tick looked was looked at: it waits for capacity or belongs to
    // someone else. Work that came due since (a timer passing while the tick ran) was not: it is
    // gone round for at once, not a poll interval later.
    if (next.getTime() <= lookedAt.getTime()) return poll;
    return Math.min(poll, Math.max(0, next.getTime() - this.host.now().getTime()));
  }

  private async dispatchRuns(now: Date): Promise<void> {
    const max = this.options.maxConcurrentPasses ?? 16;
    const capacity = max - this.running.size;
    if (capacity <= 0) return;
    const quota = this.options.passQuota;
    // With quotas, runs of a project at its quota are passed over: look further down the list,
    // so they do not hold back other projects' due runs.
    const due = await this.store.listDueRuns(now, (quota ? 4 : 1) * capacity + this.running.size, this.options.shards?.());
    const perProject = new Map<string, number>();
    for (const id of this.running.keys()) perProject.set(projectOfRunId(id), (perProject.get(projectOfRunId(id)) ?? 0) + 1);
    // A tick's claims go to the store together (one statement); each is counted until it answers.
    const claiming: Promise<void>[] = [];
    let unanswered = 0;
    for (const id of due) {
      if (this.running.size + unanswered >= max) break;
      if (this.running.has(id)) continue;
      const project = projectOfRunId(id);
      const cap = quota ? await quota(project) : undefined;
      if (cap !== undefined && (perProject.get(project) ?? 0) >= cap) continue;
      if (this.options.owns && !(await this.options.owns(id))) continue;
      perProject.set(project, (perProject.get(project) ?? 0) + 1);
      unanswered++;
      claiming.push(
        this.store.startPass(id).then((claimed) => {
          unanswered--;
          if (claimed) this.begin(claimed);
        }),
      );
    }
    await Promise.all(claiming);
  }

  private begin(claimed: ClaimedPass): void {
    const abort = new AbortController();
    this.running.set(claimed.run.id, abort);
    void this.pass(claimed, abort.signal).finally(() => this.settled(this.running, claimed.run.id));
  }

  private async pass(claimed: ClaimedPass, signal: AbortSignal): Promise<void> {
    const { run } = claimed;
    let outcome: RunOutcome;
    // The pass's span opens before its script starts; its calls' spans join it (docs/tracing.md).
    const traces = await tracing();
    traces?.pass(run);
    try {
      outcome = await startPass(this.store, claimed, this.host, this.place, signal);
    } catch (error) {
      outcome = { kind: 'failed', message: `pass could not start: ${ensureError(error).message}` };
    }
    if (signal.aborted && signal.reason === ABANDONED) return;
    let traced = outcome;
    try {
      const settled = await settleRun(this.store, run, outcome, this.host.now());
      // A run cancelled while its pass ran stays cancelled, whatever the pass ended in: so say its spans.
      if (settled?.status === 'cancelled') traced = { kind: 'cancelled', message: settled.error ?? 'cancelled' };
      if (settled) this.options.onPassEnd?.(settled);
    } catch (error) {
      // The run stays running in the store: once the store answers, it is made due and replays
      // (a pass whose end could not be written counts as lost, whatever it ended in).
      this.reportError('settling a pass failed; the run replays once the store answers', error, run.id);
      this.unsettled.add(run.id);
      traced = { kind: 'lost', message: ensureError(error).message };
    } finally {
      traces?.endPass(run, traced, this.host.now());
    }
  }

  private async dispatchActivities(now: Date): Promise<void> {
    for (;;) {
      const activity = await this.store.claimActivity([...this.host.capabilities], now, this.options.shards?.());
      if (!activity) return;
      const abort = new AbortController();
      this.activities.set(activity.id, { runId: activity.runId, abort });
      void this.attempt(activity, abort.signal)
        .catch((error: unknown) => this.reportError(`activity ${activity.name} failed to run`, error, activity.runId))
        .finally(() => this.settled(this.activities, activity.id));
    }
  }

  /**
   * One attempt, here or where `runActivity` puts it, recorded once. Nobody waits for an attempt of
   * a run that has ended: none starts, and one under way when its run is cancelled (abortPass) is
   * ended and recorded as final, so no retry follows.
   */
  private async attempt(activity: ActivityRecord, signal: AbortSignal): Promise<void> {
    const runEnded = async (): Promise<boolean> => {
      const run = await this.store.getRun(activity.runId);
      return !run || TERMINAL_STATUSES.includes(run.status);
    };
    if (await runEnded()) return void (await settleActivityAttempt(this.store, activity, { kind: 'run-ended' }, this.host.now()));
    const started = new Date();
    const end: AttemptEnd = this.options.runActivity
      ? await this.options.runActivity(activity, signal)
      : { kind: 'result', result: await runActivityAttempt(activity, 'inherit', this.host.maxResultBytes, signal) };
    await traceAttempt(activity, started, end);
    if (end.kind === 'recorded') return;
    if (signal.aborted && signal.reason !== ABANDONED && (await runEnded()))
      return void (await settleActivityAttempt(this.store, activity, { kind: 'run-ended' }, this.host.now()));
    // Left for the next executor to take again.
    if (end.kind === 'abandoned') return;
    if (end.kind === 'lost') this.reportError(`activity ${activity.name}, attempt ${activity.attempt}, was lost`, new Error(end.message), activity.runId);
    await settleActivityAttempt(this.store, activity, end, this.host.now());
  }

  private async recoverUnsettled(): Promise<void> {
    const ids = [...this.unsettled].filter((id) => !this.running.has(id));
    if (ids.length === 0) return;
    await this.store.recoverInterruptedRuns(this.host.now(), ids);
    for (const id of ids) this.unsettled.delete(id);
  }

  private reportError(message: string, error: unknown, runId?: string): void {
    if (this.options.onError) this.options.onError(message, error, runId);
    else process.stderr.write(`spool: executor: ${message}${runId ? ` (${runId})` : ''}: ${ensureError(error).message}\n`);
  }

  private settled(set: { delete(id: string): boolean }, id: string): void {
    set.delete(id);
    this.poke();
    // Each waiter looks again whether what it waits for is over (idleNow).
    for (const resolve of this.idle.splice(0)) resolve();
  }
}

/** An activity attempt's span, under its run's own (docs/tracing.md): an attempt belongs to no pass. */
async function traceAttempt(activity: ActivityRecord, started: Date, end: AttemptEnd): Promise<void> {
  if (end.kind === 'abandoned') return;
  const traces = await tracing();
  if (!traces) return;
  const ended: CallEnd =
    end.kind === 'result' ? { outcome: 'ok', exitCode: end.result.exitCode } : end.kind === 'lost' ? { outcome: 'error', detail: end.message } : { outcome: 'ok' };
  traces.activityAttempt(activity.runId, activity.name, activity.attempt, started, ended);
}
