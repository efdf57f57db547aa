import { DeterminismError, UsageError } from '../common/errors.js';
import type { Store } from '../store/store.js';
import type { JournalEntry, RunRecord, ScriptSource, Wait } from '../store/types.js';
import type { Answer } from './protocol.js';
import type { ArtifactLimits } from './limits.js';
import type { Upload } from './uploads.js';

// What the verbs (engine/verbs) need of a pass, apart from the dispatch to them in pass.ts, so
// that the verbs import this module and pass.ts imports the verbs: the arrows go one way.

/** What the host (local executor, dev server, operator) lends a pass. */
export interface PassHost {
  now(): Date;
  /** Capabilities an activity may ask for here. */
  capabilities: readonly string[];
  /** Who offers capabilities, as a refusal names them ('no agent here offers' unless set). */
  capabilitiesOfferedBy?: string;
  /**
   * Why an activity requiring these (each offered by someone) still cannot run here, if it cannot:
   * on a cluster, no one ActivityClass offers them all.
   */
  activityRefusal?(requires: readonly string[]): string | null;
  /** Why this host runs no activities, if it runs none (the operator, for now). */
  noActivities?: string;
  /**
   * Why a fan_out body cannot be read from a file here, if it cannot (the operator: its filesystem
   * is nobody's checkout; bodies are Workflows, pinned with the run).
   */
  noWorkflowFiles?: string;
  /**
   * A stored Workflow by name, as a child's source, when a script calls a name it has no file of
   * (`spool call-graph NAME` in a pass pod): the operator's Workflows, in the run's namespace.
   * Null when there is none, or a refusal saying why it cannot run. Unset where workflows are files.
   */
  storedWorkflow?: (project: string, name: string) => Promise<ScriptSource | { refusal: string } | null>;
  /**
   * `spool test`'s stubs (src/testing): a step's result or an http node's response given instead
   * of running it, recorded as a fresh one would be. Unset everywhere else.
   */
  stubs?: Stubs;
  /** The largest recorded value: a result, a cell, an output, a payload (engine/limits.ts). */
  maxResultBytes: number;
  /** How big artifacts may be; SPOOL_MAX_ARTIFACT_BYTES and SPOOL_MAX_RUN_ARTIFACT_BYTES when absent. */
  artifactLimits?: ArtifactLimits;
  env: string;
  /** Something other runs may be waiting on changed: an event, a new run, a released lease, ... */
  notify(change: Change): void;
}

/** A stubbed step's result: a command's stdout and exit code, or a step_fn's value. */
export type StepStub = { stdout: string; exitCode: number } | { value: unknown };

/** A stubbed http node's response. */
export interface HttpStub {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface Stubs {
  /** The stub of the step (or step_fn) of this name, or null: it runs. */
  step(name: string): StepStub | null;
  /** The stub of the http node of this name, or null: its request is sent. */
  http(node: string): HttpStub | null;
}

export type Change =
  | { kind: 'event'; project: string; type: string; id: string }
  | { kind: 'run-created'; runId: string }
  | { kind: 'lease-holder'; runId: string }
  | { kind: 'activity-queued'; id: string };

export interface Suspension {
  awaiting: string;
  wait: Wait;
  wakeAt: Date | null;
}

/** A durable call reached in this pass, with what the journal holds at its position. */
export interface Reached {
  position: number;
  occurrence: number;
  verb: string;
  name: string;
  call: JournalEntry | null;
  result: JournalEntry | null;
}

interface Slot {
  call?: JournalEntry;
  result?: JournalEntry;
}

/**
 * How long a fresh step runs before its call entry is written on its own. A step that ends sooner
 * has its call and result written in one commit; one that runs longer shows as running (`spool
 * status`, the run page) from then on. Either way a step whose result is not recorded runs again.
 */
export const CALL_VISIBLE_MS = 250;

/** A fresh call's entry not written yet (deferCall), and the write the timer started, if it did. */
interface UnwrittenCall {
  reached: Reached;
  data: Record<string, unknown>;
  timer: NodeJS.Timeout;
  written: Promise<boolean> | null;
}

/**
 * One pass of one run, as the verbs see it: matches each durable call the script reaches against
 * the journal by position, answers recorded calls from it and records new ones. Pass (pass.ts)
 * adds the dispatch of requests to the verbs.
 */
export class PassState {
  private readonly slots = new Map<number, Slot>();
  private cursor = 0;
  private readonly occurrences = new Map<string, number>();
  /** Calls told to execute whose `done` has not arrived yet. */
  readonly executing = new Map<number, Reached>();
  /** Fresh calls told to execute whose call entry waits for their result (deferCall). */
  private readonly unwritten = new Map<number, UnwrittenCall>();
  /** Artifact puts told to execute whose commit has not arrived yet. */
  readonly uploads = new Map<number, Upload>();
  suspension: Suspension | null = null;
  /** Set when the run must fail whatever the script does next (a determinism error). */
  failure: string | null = null;
  /**
   * Set when the store could not be reached for a call: the script is ended as at a suspension and
   * the pass counts as lost, so the run replays once the database is back instead of failing.
   */
  lost: string | null = null;
  /**
   * Set when the host is ending the script (its run was cancelled, or this process no longer runs
   * it): a call that arrives meanwhile (a step whose command outlived the signal) is recorded by
   * nobody, so the journal never holds a result the ending itself caused.
   */
  stopping = false;

  constructor(
    readonly store: Store,
    readonly run: RunRecord,
    journal: JournalEntry[],
    readonly host: PassHost,
    readonly lenient = run.lenient,
  ) {
    for (const entry of journal) this.slot(entry.position)[entry.kind] = entry;
  }

  private slot(position: number): Slot {
    let slot = this.slots.get(position);
    if (!slot) {
      slot = {};
      this.slots.set(position, slot);
    }
    return slot;
  }

  /**
   * Looks at the next position without taking it. A recorded call there must be the same verb and
   * name (the determinism check). A call the journal does not hold there is new, and `refuseNew`
   * may refuse it first: a refused call takes no position, so on a replay a script that caught the
   * refusal and went on meets it again here, not a determinism error.
   */
  peek(verb: string, name: string, refuseNew?: (position: number) => void): Reached {
    const position = this.cursor;
    const slot = this.slots.get(position) ?? {};
    const key = `${family(verb)}\0${name}`;
    const occurrence = this.occurrences.get(key) ?? 0;
    const call = slot.call ?? null;
    const matches = call !== null && family(call.verb) === family(verb) && call.name === name;
    if (!matches) refuseNew?.(position);
    if (call && !matches && !this.lenient) {
      throw new DeterminismError(
        `determinism error at call ${position + 1}: the journal recorded ${describe(call.verb, call.name)} there, ` +
          `but this pass reached ${describe(verb, name)}; replay must reach the same durable calls in the same order ` +
          `(run with --lenient to switch this check off)`,
      );
    }
    return { position, occurrence, verb, name, call, result: slot.result ?? null };
  }

  /**
   * Whether the journal holds this very call (verb and name) at the next position: a replay of it.
   * A call that is not one may be refused, and its refusal must be decided before the journal has
   * a say, the same way on every pass: otherwise a script that caught a refusal on its first pass
   * meets a determinism error on the next (DESIGN §9).
   */
  recordedNext(verb: string, name: string): boolean {
    return this.recordedCall(verb, name) !== undefined;
  }

  /** The journal's call entry recordedNext finds, for a verb whose calls all share one name (a child's `call`). */
  recordedCall(verb: string, name: string): JournalEntry | undefined {
    const call = this.slots.get(this.cursor)?.call;
    return call !== undefined && family(call.verb) === family(verb) && call.name === name ? call : undefined;
  }

  /** The position the next durable call takes. */
  get nextPosition(): number {
    return this.cursor;
  }

  /** Whether the next call is already in the journal: what the pass does now, it did before. */
  get replaying(): boolean {
    return this.slots.get(this.cursor)?.call !== undefined;
  }

  /** Whether the next call's result is already in the journal: it is answered from there. */
  get answeredNext(): boolean {
    return this.slots.get(this.cursor)?.result !== undefined;
  }

  /** The call entry at a position, if any: recorded, or to be written with its result (deferCall). */
  recordedAt(position: number): JournalEntry | undefined {
    const unwritten = this.unwritten.get(position);
    return this.slots.get(position)?.call ?? (unwritten && this.entry(unwritten.reached, 'call', unwritten.data));
  }

  /** Takes the position `peek` looked at. */
  take(reached: Reached): Reached {
    this.cursor = reached.position + 1;
    this.occurrences.set(`${family(reached.verb)}\0${reached.name}`, reached.occurrence + 1);
    return reached;
  }

  /**
   * Gives back a position taken for a call that then failed with nothing recorded (an artifact
   * over its limit half-way through), when no call has been taken since: a refused call takes no
   * position, so the script that goes on meets the same journal on its next pass.
   */
  untake(position: number, verb: string, name: string, occurrence: number): void {
    if (this.cursor !== position + 1 || this.slots.get(position)?.call) return;
    this.cursor = position;
    this.occurrences.set(`${family(verb)}\0${name}`, occurrence);
  }

  async record(
    reached: Reached,
    kind: 'call' | 'result',
    data: Record<string, unknown>,
    store: Store = this.store,
  ): Promise<JournalEntry> {
    const entry = await store.appendJournal(this.entry(reached, kind, data));
    this.slot(reached.position)[kind] = entry;
    reached[kind] = entry;
    return entry;
  }

  private entry(reached: Reached, kind: 'call' | 'result', data: Record<string, unknown>): JournalEntry {
    const { position, verb, name, occurrence } = reached;
    return { runId: this.run.id, position, kind, verb, name, occurrence, data };
  }

  /**
   * A fresh call about to execute in the script (a step's command, a step_fn's function): its call
   * entry is written with its result (recordResult), in one commit, unless it runs past
   * CALL_VISIBLE_MS, when it is written on its own.
   */
  deferCall(reached: Reached, data: Record<string, unknown>): void {
    const unwritten: UnwrittenCall = {
      reached,
      data,
      written: null,
      timer: setTimeout(() => {
        unwritten.written = this.record(reached, 'call', data).then(
          () => true,
          () => false, // written with the result instead
        );
      }, CALL_VISIBLE_MS),
    };
    unwritten.timer.unref();
    this.unwritten.set(reached.position, unwritten);
  }

  /**
   * The pass is over (its script ended): calls still executing never got a result, so their call
   * entries are not written now; the next pass meets those calls as new and runs them again.
   */
  end(): void {
    // A line the script sent before it died may still be read: answered as to a stopping script.
    this.stopping = true;
    for (const unwritten of this.unwritten.values()) clearTimeout(unwritten.timer);
    this.unwritten.clear();
  }

  /** Records a call's result, with its call entry if that is still unwritten (deferCall). */
  async recordResult(reached: Reached, data: Record<string, unknown>, store: Store = this.store): Promise<JournalEntry> {
    const unwritten = this.unwritten.get(reached.position);
    this.unwritten.delete(reached.position);
    if (unwritten) clearTimeout(unwritten.timer);
    // Its call unwritten and no longer deferred: the pass ended (end()) before the result came, as a
    // cancel ends it. A result alone would be a call the next pass cannot meet: record nothing, and
    // the next pass runs the call again.
    if (!unwritten && !reached.call) throw new Error(`call ${reached.position + 1}'s result came after its pass ended: not recorded`);
    if (!unwritten || (unwritten.written && (await unwritten.written))) return this.record(reached, 'result', data, store);
    const [call, result] = await store.appendJournalEntries([this.entry(reached, 'call', unwritten.data), this.entry(reached, 'result', data)]);
    if (!call || !result) throw new Error(`the journal did not answer both entries of call ${reached.position + 1}`);
    Object.assign(this.slot(reached.position), { call, result });
    Object.assign(reached, { call, result });
    return result;
  }

  /**
   * A recorded call elsewhere in the run with one of these verbs and this name (any name when null):
   * how names that must be unique within a run are checked.
   */
  findRecorded(verbs: readonly string[], name: string | null, except: number): JournalEntry | null {
    for (const [position, slot] of this.slots) {
      const call = slot.call;
      if (position !== except && call && verbs.includes(call.verb) && (name === null || call.name === name)) return call;
    }
    return null;
  }

  suspend(suspension: Suspension): Answer {
    this.suspension = suspension;
    return { status: 'suspended', message: `script suspended awaiting ${suspension.awaiting}` };
  }

  /** A refused call: one line for the user, nothing recorded. */
  refuse(message: string): never {
    throw new UsageError(message);
  }

  scope(entity: string | undefined): string {
    return entity ? `entity:${entity}` : `run:${this.run.id}`;
  }
}

/** step and step_fn share names; everything else is its own family. */
function family(verb: string): string {
  return verb === 'step_fn' ? 'step' : verb;
}

function describe(verb: string, name: string): string {
  return name ? `\`${verb} ${name}\`` : `\`${verb}\``;
}
