import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { DelayedKeys } from './delayed-keys.js';

/**
 * A keyed work queue in the manner of client-go's workqueue: informer handlers add keys
 * (`namespace/name`), workers reconcile them. A key stands for "look at this object again", not for
 * one event, so a key already waiting is not queued twice, and a key is never reconciled by two
 * workers at once (the reconciler reads the latest state anyway). A key added while it is being
 * reconciled is run once more afterwards, because the change may have landed after the reconciler
 * read the object.
 *
 * As controller-runtime's Result, a reconcile may ask to be run again later (`requeueAfterMs`: a
 * Run asleep until its wake time), and a failure is either retried with per-key backoff or, when
 * `terminal` says so (bad input that only a change of the object can mend), not retried at all.
 */
export interface WorkQueueOptions {
  /**
   * Reconciles one key. A throw or rejection requeues the key with per-key backoff, unless
   * `terminal` calls the error terminal; `requeueAfterMs` runs it again after that long.
   */
  process: (key: string) => Promise<ReconcileResult | void> | ReconcileResult | void;
  /** Whether an error is terminal: not retried; the key runs again only when `add`ed (a change). */
  terminal?: (error: unknown) => boolean;
  /** Told how each reconcile ended, for metrics. */
  onResult?: (key: string, result: ReconcileOutcome) => void;
  /** How many keys are reconciled at once (distinct keys only). 1 unless set. */
  workers?: number;
  /**
   * Told of each failure before the key is requeued, for logs and metrics; `previous` is the
   * error of the failure before it (none on a first failure), so a caller can log a key's error
   * once rather than at every retry.
   */
  onError?: (error: unknown, key: string, retry: { attempt: number; delayMs: number; previous?: unknown; terminal?: true }) => void;
  /** Per-key retry delays: 100 ms doubling to 60 s unless set. */
  backoff?: BackoffPolicy;
}

export interface ReconcileResult {
  /** Run the key again after this many milliseconds (the earliest of several asks wins). */
  requeueAfterMs?: number;
  /**
   * A terminal error the reconcile wrote into the object's status (bad input): counted as
   * `terminal`, and not run again until the object changes.
   */
  terminal?: string;
}

/** How a reconcile ended: `requeue` asked to run again later, `error` is retried with backoff. */
export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'terminal';

export interface WorkQueue {
  /** Queues `key` unless it is already waiting; if it is running, runs it once more afterwards. */
  add(key: string): void;
  /** Adds `key` after `ms` (a due time, a retry). Of several pending delays for one key the earliest wins. */
  addAfter(key: string, ms: number): void;
  /**
   * `add`, unless the key failed and waits for (or is in) its retry, or failed terminally: a
   * periodic sweep looks at every object again and must not undo a failing key's backoff. A nudge
   * while the key runs is dropped if that run fails. A change uses `add`.
   */
  nudge(key: string): void;
  /** Keys waiting to run now (delayed keys not counted): the `queue_depth` metric. */
  readonly depth: number;
  /** Keys being reconciled right now. */
  readonly inFlight: number;
  /** Keys waiting for a delay (`addAfter`, retries) to pass. */
  readonly delayed: number;
  /**
   * Stops taking keys and starting work; drops waiting and delayed keys and resolves when the
   * work in flight has finished. With `drain`, keys already waiting are run first (delayed ones
   * are still dropped).
   */
  shutdown(options?: { drain?: boolean }): Promise<void>;
}

const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 60_000 };

export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const workers = Math.max(1, Math.floor(options.workers ?? 1));
  const policy = options.backoff ?? DEFAULT_BACKOFF;
  // A Set keeps insertion order, so it is a FIFO that also answers "already waiting?" in O(1).
  const waiting = new Set<string>();
  const running = new Set<string>();
  // Keys added while running: they go back into `waiting` when their run ends.
  const dirty = new Set<string>();
  // Keys nudged while running: they go back into `waiting` only if their run succeeds.
  const nudged = new Set<string>();
  // Behind one timer: a Run asleep waits here until its wake time (./delayed-keys.ts).
  const delayed = new DelayedKeys((key) => add(key));
  /** Per failing key (terminal failures too), how many times in a row it failed and the last error. */
  const failures = new Map<string, { attempt: number; error: unknown }>();
  let shuttingDown = false;
  let draining = false;
  let idle: (() => void) | undefined;

  function add(key: string): void {
    if (shuttingDown) return;
    if (running.has(key)) {
      dirty.add(key);
      return;
    }
    if (waiting.has(key)) return;
    waiting.add(key);
    pump();
  }

  function addAfter(key: string, ms: number): void {
    if (shuttingDown) return;
    if (ms <= 0) {
      add(key);
      return;
    }
    delayed.add(key, ms);
  }

  function pump(): void {
    if (shuttingDown && !draining) return;
    while (running.size < workers && waiting.size > 0) {
      const key = waiting.values().next().value as string;
      waiting.delete(key);
      running.add(key);
      void run(key);
    }
  }

  async function run(key: string): Promise<void> {
    let failed = false;
    try {
      const result = await options.process(key);
      failures.delete(key);
      const requeueAfterMs = result ? result.requeueAfterMs : undefined;
      tell(key, result && result.terminal !== undefined ? 'terminal' : requeueAfterMs === undefined ? 'success' : 'requeue');
      if (requeueAfterMs !== undefined) addAfter(key, requeueAfterMs);
    } catch (error) {
      failed = true;
      const before = failures.get(key);
      const attempt = (before?.attempt ?? 0) + 1;
      const terminal = options.terminal?.(error) === true;
      failures.set(key, { attempt, error });
      const delayMs = terminal ? 0 : backoffDelay(attempt, policy);
      tell(key, terminal ? 'terminal' : 'error');
      try {
        options.onError?.(error, key, { attempt, delayMs, ...(before ? { previous: before.error } : {}), ...(terminal ? { terminal } : {}) });
      } catch {
        // A failing error reporter must not stop the retry.
      }
      if (!terminal) addAfter(key, delayMs);
    } finally {
      running.delete(key);
      // A nudge during a run that failed would undo the backoff the failure just set.
      const again = dirty.delete(key) || (nudged.delete(key) && !failed);
      if (again && !shuttingDown) waiting.add(key);
      pump();
      if (shuttingDown && running.size === 0 && (!draining || waiting.size === 0)) idle?.();
    }
  }

  function tell(key: string, result: ReconcileOutcome): void {
    try {
      options.onResult?.(key, result);
    } catch {
      // Metrics must not change what the queue does.
    }
  }

  function nudge(key: string): void {
    if (shuttingDown || failures.has(key)) return;
    if (running.has(key)) nudged.add(key);
    else add(key);
  }

  async function shutdown(shutdownOptions: { drain?: boolean } = {}): Promise<void> {
    if (!shuttingDown) {
      shuttingDown = true;
      draining = shutdownOptions.drain === true;
      delayed.clear();
      dirty.clear();
      nudged.clear();
      if (!draining) waiting.clear();
    }
    if (running.size === 0 && waiting.size === 0) return;
    await new Promise<void>((resolve) => {
      const previous = idle;
      idle = () => {
        previous?.();
        resolve();
      };
    });
  }

  return {
    add,
    addAfter,
    nudge,
    get depth() {
      return waiting.size;
    },
    get inFlight() {
      return running.size;
    },
    get delayed() {
      return delayed.size;
    },
    shutdown,
  };
}
