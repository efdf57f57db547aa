/** Exponential backoff with jitter, shared by the informer (reconnects) and the work queue (retries). */
export interface BackoffPolicy {
  /** Delay before the first retry. */
  initialMs: number;
  /** No delay exceeds this, jitter included. */
  maxMs: number;
  /** Growth per attempt; 2 unless set. */
  factor?: number;
  /**
   * Fraction of each delay that is random (0..1; 0.5 unless set): the delay is drawn from
   * [(1 - jitter) * d, d]. Without it, every client that lost the API server at the same moment
   * would come back at the same moment too.
   */
  jitter?: number;
}

/** The delay before retry number `attempt` (1 for the first retry). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const factor = policy.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0.5));
  const exponent = Math.max(0, attempt - 1);
  // Capping the exponent keeps the arithmetic finite after many failures; the cap below does the rest.
  const ceiling = Math.min(policy.maxMs, policy.initialMs * factor ** Math.min(exponent, 64));
  return Math.round(ceiling * (1 - jitter * random()));
}

/** A backoff that remembers how many times in a row it was needed; `reset()` after a success. */
export class Backoff {
  private failures = 0;

  constructor(private readonly policy: BackoffPolicy) {}

  /** Counts one more failure and answers how long to wait before trying again. */
  next(): number {
    this.failures += 1;
    return backoffDelay(this.failures, this.policy);
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects: callers check the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

interface UntilItAnswersOptions {
  retryable?: (error: unknown) => boolean;
  /** Told of each retryable failure; `failedBefore` counts the ones before it (0: the first). */
  onFailure: (error: unknown, failedBefore: number) => void;
}

/**
 * `call`, made again with backoff (0.5 s growing to 10 s) for as long as it fails with an error
 * `retryable` accepts, and none other is thrown: the database a replica needs before it can do
 * anything (its store at start, the previous leader's passes) is waited for, not given up on.
 * `onFailure` hears of each failure (callers say so once); `stopped` ends the wait, answering undefined.
 */
export function untilItAnswers<T>(call: () => Promise<T>, options: UntilItAnswersOptions): Promise<T>;
export function untilItAnswers<T>(call: () => Promise<T>, options: UntilItAnswersOptions & { stopped: () => boolean }): Promise<T | undefined>;
export async function untilItAnswers<T>(
  call: () => Promise<T>,
  options: UntilItAnswersOptions & { stopped?: () => boolean },
): Promise<T | undefined> {
  const backoff = new Backoff({ initialMs: 500, maxMs: 10_000 });
  while (!options.stopped?.()) {
    try {
      return await call();
    } catch (error) {
      if (options.retryable && !options.retryable(error)) throw error;
      options.onFailure(error, backoff.attempts);
      await sleep(backoff.next());
    }
  }
  return undefined;
}
