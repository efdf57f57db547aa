import { DeterminismError } from '../common/errors.js';
import type { Store } from '../store/store.js';
import type { JournalEntry, RunRecord } from '../store/types.js';
import { Pass, type PassHost, type Reached } from './pass.js';
import type { Answer, Request } from './protocol.js';

/** A durable call as a person names it: its verb and name. */
export interface CallName {
  verb: string;
  name: string;
}

/** Where a replay's script reached a call the journal records another call at. */
export interface Divergence {
  position: number;
  recorded: CallName;
  reached: CallName;
  /** Where in the script the call was made, when the host can tell (bash: file:line). */
  where: string | null;
}

/** Ends the script once the journal has no answer: a replay executes and records nothing. */
const STOPPED: Answer = { status: 'suspended', message: 'spool replay: the journal answers nothing past here; the replay ends' };

class ReplayEnd extends Error {}

/**
 * A pass of `spool replay` (docs/testing-workflows.md): the engine's pass over a copy of a run's
 * journal, answering every call the journal answers as a pass of the run would, and ending the
 * script at the first call it does not answer (a new call, or the one the run was waiting on), so
 * no step's command runs and nothing is recorded. Divergences are found by the engine's own
 * determinism check (PassState.peek); this adds what a report needs to name them.
 */
export class ReplayPass extends Pass {
  /** The first call the journal does not answer, where the replay ended. */
  stop: (CallName & { position: number; where: string | null }) | null = null;
  divergence: Divergence | null = null;
  /** Calls a lenient replay answered with the result of the different call recorded there. */
  readonly lenientAnswers = new Map<number, Divergence>();
  /** Where in the script the call being handled was made; the host sets it when it can tell. */
  where: () => string | null = () => null;
  private readonly recorded = new Map<number, JournalEntry>();

  constructor(store: Store, run: RunRecord, journal: JournalEntry[], host: PassHost, lenient: boolean) {
    super(store, run, journal, host, lenient);
    for (const entry of journal) if (entry.kind === 'call') this.recorded.set(entry.position, entry);
  }

  static async open(store: Store, run: RunRecord, host: PassHost, lenient: boolean): Promise<ReplayPass> {
    return new ReplayPass(store, run, await store.readJournal(run.id), host, lenient);
  }

  /** How many durable calls the journal records (answered or not). */
  get recordedCalls(): number {
    return this.recorded.size;
  }

  override async handle(request: Request): Promise<Answer> {
    if (this.stop) return STOPPED;
    const answer = await super.handle(request);
    return this.stop ? STOPPED : answer;
  }

  override peek(verb: string, name: string, refuseNew?: (position: number) => void): Reached {
    const position = this.nextPosition;
    const call = this.recorded.get(position);
    const diverged = (): Divergence => ({
      position,
      recorded: { verb: call?.verb ?? '', name: call?.name ?? '' },
      reached: { verb, name },
      where: this.where(),
    });
    let reached: Reached;
    try {
      reached = super.peek(verb, name, refuseNew);
    } catch (error) {
      if (error instanceof DeterminismError) this.divergence = diverged();
      throw error;
    }
    if (!reached.result) {
      this.stop = { position, verb, name, where: this.where() };
      throw new ReplayEnd('the replay ends here');
    }
    if (call && !this.recordedNext(verb, name)) this.lenientAnswers.set(position, diverged());
    return reached;
  }
}
