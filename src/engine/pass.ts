import { DeterminismError, SpoolError, UsageError, ensureError } from '../common/errors.js';
import { oneLine } from '../common/one-line.js';
import { StoreUnavailableError } from '../store/unavailable.js';
import type { Store } from '../store/store.js';
import type { JournalEntry, RunRecord } from '../store/types.js';
import type { Answer, Request } from './protocol.js';
import { EXIT } from './protocol.js';
import { checkRequestValues } from './limits.js';
import { PassState, type PassHost } from './pass-state.js';
import { checkRequest } from './request-schema.js';
import { handleVerb } from './verbs/index.js';
import { traceCall } from './trace-call.js';
import { tracing, type PassTrace } from '../tracing/tracing.js';

export type { Change, HttpStub, PassHost, Reached, StepStub, Stubs, Suspension } from './pass-state.js';

/** What a script is told when its pass is lost to an unreachable database: it is ended, and replays. */
const LOST_ANSWER = { status: 'suspended', message: 'script suspended: the database cannot be reached; the run replays once it is back' } as const;

/** What a script is told once its host is ending it (stopping): it is on its way out, quietly. */
const STOPPING_ANSWER = { status: 'suspended', message: 'script ended: its pass is being stopped' } as const;

/**
 * One pass of one run: matches each durable call the script reaches against the journal by
 * position, answers recorded calls from it and executes (and records) the first new one.
 */
export class Pass extends PassState {
  /** The pass's spans, when tracing is on (docs/tracing.md); a replay's pass (replay-pass.ts) has none. */
  trace: PassTrace | null = null;

  /** The pass of a run, from its journal: as the run's claim read it (store.startPass), else read now. */
  static async start(store: Store, run: RunRecord, host: PassHost, lenient?: boolean, journal?: JournalEntry[]): Promise<Pass> {
    const pass = new Pass(store, run, journal ?? (await store.readJournal(run.id)), host, lenient);
    pass.trace = (await tracing())?.pass(run) ?? null;
    return pass;
  }

  /** Answers one request; never throws. */
  handle(request: Request): Promise<Answer> {
    // Before the call's span too: a step cut off by the ending stays unfinished in its pass's span.
    if (this.stopping) return Promise.resolve(STOPPING_ANSWER);
    return this.trace ? traceCall(this, this.trace, request, () => this.answer(request)) : this.answer(request);
  }

  private async answer(request: Request): Promise<Answer> {
    if (this.suspension) return { status: 'suspended', message: `script suspended awaiting ${this.suspension.awaiting}` };
    if (this.lost) return LOST_ANSWER;
    if (this.failure) return { status: 'error', kind: 'determinism', message: this.failure, exitCode: EXIT.failure };
    try {
      checkRequest(request);
      checkRequestValues(request, this.host.maxResultBytes);
      return await handleVerb(this, request);
    } catch (raw) {
      const error = ensureError(raw);
      if (error instanceof DeterminismError) {
        this.failure = error.message;
        return { status: 'error', kind: 'determinism', message: error.message, exitCode: EXIT.failure };
      }
      if (error instanceof UsageError) return { status: 'error', kind: 'usage', message: oneLine(error.message), exitCode: EXIT.usage };
      if (error instanceof StoreUnavailableError) {
        this.lost = error.message;
        return LOST_ANSWER;
      }
      const limit = error instanceof SpoolError && error.kind === 'limit';
      return {
        status: 'error',
        kind: limit ? 'limit' : 'internal',
        message: limit ? oneLine(error.message) : error.message,
        exitCode: EXIT.failure,
      };
    }
  }
}
