import { describe, expect, it } from 'vitest';
import type { JournalEntry, RunRecord } from '../../src/store/types.js';
import { check } from './check.js';
import type { Workflow } from './generate.js';
import type { History } from './run.js';
import type { Received } from '../graph/key-server.js';

/**
 * The checker on histories written out: a put-file whose pass was lost between its step and its put
 * is allowed its refusal on the passes after, and only then (seed 903552712, the dev server killed
 * there, was reported as a replay answering differently), and so is a call-graph's; a call-node is
 * sent with one key, again only after a fault.
 */

const workflow: Workflow = { seed: 0, ops: [{ kind: 'put-file', id: 'o0', payload: Buffer.from('x') }], checkoutFile: Buffer.alloc(0) };
const entry = (position: number, kind: 'call' | 'result', verb: string, name: string): JournalEntry => ({ runId: 'r', position, kind, verb, name, occurrence: 1, data: {} });
const make = [entry(1, 'call', 'step', 'o0-make'), entry(1, 'result', 'step', 'o0-make')];
const put = [entry(2, 'call', 'artifact.put', 'o0'), entry(2, 'result', 'artifact.put', 'o0')];

function history(journal: JournalEntry[], snapshots: JournalEntry[][], seen: [number, Buffer, number][], requests: Received[] = []): History {
  return {
    label: 'written out',
    run: { status: 'succeeded' } as RunRecord,
    journal,
    snapshots,
    seen: new Map([['o0', new Map(seen.map(([pass, bytes, code]) => [pass, { bytes, code }]))]]),
    executions: new Map([['o0-make', 1]]),
    requests,
    faults: snapshots.map(() => 'killed the dev server'),
    scriptKilled: false,
    resumed: null,
    cancel: null,
    leasesHeld: [],
    output: '',
  };
}

const reference = history([...make, ...put], [], [[1, Buffer.from('x'), 0]]);

describe("the replay verifier's checks", () => {
  it('given a pass lost after the step made the file and before the put, then the put refused on the passes after breaks nothing', () => {
    const lostFile = history(make, [make], [[2, Buffer.alloc(0), 2]]);
    expect(check(workflow, lostFile, reference)).toEqual([]);
  });

  it('given the put was recorded before the fault, then a refusal after it is a replay answering differently', () => {
    const replayedWrong = history(make, [[...make, ...put]], [[1, Buffer.from('x'), 0], [2, Buffer.alloc(0), 2]]);
    expect(check(workflow, replayedWrong, reference).map((each) => each.invariant)).toEqual([
      'every call answers the same on every pass',
      'recorded bytes come back as they went',
      'a replay answers byte for byte',
      'nothing recorded is lost',
      'nothing recorded is lost',
      'the journal equals an uninterrupted run of the same seed',
    ]);
  });

  it('given a result with no call at its position, or another call there, then each is reported', () => {
    const alone = history([make[1]!, ...put], [], [[1, Buffer.from('x'), 0]]);
    expect(check(workflow, alone, null).map((each) => `${each.invariant}: ${each.detail}`)).toContain('every result has its call: step o0-make at 1: no call there');
    const other = history([entry(1, 'call', 'step', 'other'), make[1]!, ...put], [], [[1, Buffer.from('x'), 0]]);
    expect(check(workflow, other, null).map((each) => `${each.invariant}: ${each.detail}`)).toContain('every result has its call: step o0-make at 1: the call there is step other');
  });

  it('given a pass lost after the step made the graph file and before call-graph, then its refusal after breaks nothing, and its call is not expected', () => {
    const graph: Workflow = { seed: 0, ops: [{ kind: 'call-graph', id: 'o0' }], checkoutFile: Buffer.alloc(0) };
    const called = [entry(2, 'call', 'call', ''), entry(2, 'result', 'call', '')];
    const uninterrupted = history([...make, ...called], [], [[2, Buffer.from('{"y":"o0"}\n'), 0]]);
    expect(check(graph, history(make, [make], [[2, Buffer.alloc(0), 2]]), uninterrupted)).toEqual([]);
    expect(check(graph, history(make, [[...make, ...called]], [[2, Buffer.alloc(0), 2]]), uninterrupted).map((each) => each.invariant)).toContain(
      'every call answers the same on every pass',
    );
  });

  it('given a call-node, then one key sent again after a fault holds, and a second key, or a second send with no fault, does not', () => {
    const node: Workflow = { seed: 0, ops: [{ kind: 'call-node', id: 'o0' }], checkoutFile: Buffer.alloc(0) };
    const charged = [entry(1, 'call', 'step_fn', 'node o0'), entry(1, 'result', 'step_fn', 'node o0')];
    const sent = (key: string): Received => ({ path: '/o0', key, body: '', at: 0 });
    const answer = Buffer.from('{"status":200,"headers":{},"body":{"key":"spool-a","seen":1}}\n');
    const broken = (h: History): string[] => check(node, h, null).map((each) => `${each.invariant}: ${each.detail}`);
    expect(broken(history(charged, [[charged[0] as JournalEntry]], [[1, answer, 0]], [sent('spool-a'), sent('spool-a')]))).toEqual([]);
    expect(broken(history(charged, [], [[1, answer, 0]], [sent('spool-a'), sent('spool-a')]))).toEqual(['an http node is sent once per key: o0 was sent 2 times with 0 faults']);
    expect(broken(history(charged, [], [[1, answer, 0]], [sent('spool-a'), sent('spool-b')]))).toEqual([
      'recorded bytes come back as they went: call-node o0 on pass 1: 62 bytes 7b22737461747573223a3230302c2268656164657273223a…',
      'an http node is sent once per key: o0 was sent with 2 keys: spool-a, spool-b',
    ]);
  });
});

/**
 * A wait the harness answers: the harness sends its signal twice; the wait must record the first,
 * once, and every pass print it (a wait that took the second would replay it too, so only the
 * recorded result and the bytes against what was sent can tell).
 */
describe("the replay verifier's checks of the waits it answers", () => {
  const op = { kind: 'wait-signal', id: 'o0', payload: 'first \u2603\n', second: 'second', via: 'cli', when: 'waiting' } as const;
  const waits: Workflow = { seed: 0, ops: [op], checkoutFile: Buffer.alloc(0) };
  const answered = (payload: string): History => {
    const result = { ...entry(1, 'result', 'wait.signal', 'o0'), data: { payload } };
    const written = history([entry(1, 'call', 'wait.signal', 'o0'), result], [], [[1, Buffer.from(`${payload}\n`), 0]]);
    return { ...written, executions: new Map() };
  };

  it('given the wait took the first signal, then nothing is broken', () => {
    expect(check(waits, answered(op.payload), null)).toEqual([]);
  });

  it('given the wait took the second signal, then the recorded result and the bytes are not what was sent first', () => {
    expect(check(waits, answered(op.second), null).map((each) => each.invariant)).toEqual([
      'recorded bytes come back as they went',
      'a wait records what the harness sent, once',
    ]);
  });
});

/**
 * A script killed alone, its runner alive: the pass ends and the run fails "script killed by SIGKILL",
 * with the start of the uninterrupted run's journal, each body run at most once, and `spool resume`
 * refusing it in one line.
 */
describe("the replay verifier's checks of a script killed alone", () => {
  const killed = (error: string, journal: JournalEntry[], runs: number): History => ({
    ...history(journal, [], []),
    run: { status: 'failed', error } as RunRecord,
    executions: new Map([['o0-make', runs]]),
    faults: ['killed the script (pid 1), its runner left alive'],
    scriptKilled: true,
    resumed: { code: 2, output: 'spool: run r has ended (failed: script killed by SIGKILL); there is nothing to resume\n' },
  });

  it('given the run failed saying so with what came before the kill, then nothing is broken', () => {
    expect(check(workflow, killed('script killed by SIGKILL', make, 1), reference)).toEqual([]);
  });

  it('given another failure, a body run twice and calls the uninterrupted run did not make, then each is reported', () => {
    const strayed = killed('script exited 1', [...put, ...make], 2);
    expect(check(workflow, strayed, reference).map((each) => each.invariant)).toEqual([
      'a script killed alone fails its run, saying so',
      'each body runs once per recorded result',
      "an ended run's journal is the start of an uninterrupted one's",
    ]);
  });

  it("given a failed step, then its stderr's tail must be kept beside its result where the client keeps one, and a succeeded step's never", () => {
    const steps: Workflow = { seed: 0, ops: [{ kind: 'step', id: 'o0', payload: Buffer.alloc(0), exit: 3 }], checkoutFile: Buffer.alloc(0) };
    const result = (data: Record<string, unknown>): JournalEntry => ({ ...entry(1, 'result', 'step', 'o0'), data: { stdout: '', exitCode: 3, ...data } });
    const ran = (data: Record<string, unknown>): History => ({ ...history([entry(1, 'call', 'step', 'o0'), result(data)], [], []), seen: new Map(), executions: new Map([['o0', 1]]) });
    const broken = (h: History, tails: boolean): string[] => check(steps, h, null, tails).map((each) => each.invariant);
    const invariant = "a failed step keeps its stderr's tail, and only a failed one";
    expect(broken(ran({ stderrTail: 'o0 failed' }), true)).toEqual([]);
    expect(broken(ran({}), true)).toEqual([invariant]);
    expect(broken(ran({ stderrTail: 'something else' }), true)).toEqual([invariant]);
    // An SDK's step sends no tail: none is fine there, the step's own is too.
    expect(broken(ran({}), false)).toEqual([]);
    const succeeded: Workflow = { ...steps, ops: [{ kind: 'step', id: 'o0', payload: Buffer.alloc(0), exit: 0 }] };
    expect(check(succeeded, ran({ exitCode: 0, stderrTail: 'o0 failed' }), null, true).map((each) => each.invariant)).toEqual([invariant]);
  });
});

/**
 * A person's `spool cancel` at a random moment: a run it found under way ends cancelled, saying so,
 * with the start of the uninterrupted run's journal, and records nothing and starts no body (but the
 * one already handed out) once the cancel answered; one that had ended stays as it ended. Every
 * ended run, cancelled or not, holds no lock.
 */
describe("the replay verifier's checks of a cancel", () => {
  const cancelledAt = (journal: JournalEntry[], runs: number, output = 'cancelled r\n'): History['cancel'] => ({
    output,
    journal: journal.map((each) => `${each.position}/${each.kind}`),
    executions: new Map([['o0-make', runs]]),
  });
  const cancelled = (journal: JournalEntry[], runs: number, cancel: History['cancel']): History => ({
    ...history(journal, [], []),
    run: { status: 'cancelled', error: 'cancelled' } as RunRecord,
    executions: new Map([['o0-make', runs]]),
    faults: ['spool cancel (0 ms late): cancelled r'],
    cancel,
  });
  const broken = (h: History): string[] => check(workflow, h, reference).map((each) => `${each.invariant}: ${each.detail}`);

  it('given a run cancelled after its step, with nothing after the cancel, then nothing is broken', () => {
    expect(broken(cancelled(make, 1, cancelledAt(make, 1)))).toEqual([]);
    expect(broken(cancelled([], 0, cancelledAt([], 0)))).toEqual([]);
  });

  it('given one body started after the cancel answered (its step handed out before), then that is allowed; its result recorded is not', () => {
    expect(broken(cancelled([], 1, cancelledAt([], 0)))).toEqual([]);
    expect(broken(cancelled(make, 1, cancelledAt([], 0)))).toEqual([
      'a cancelled run records nothing once its cancel answered: call step o0-make at 1, result step o0-make at 1',
    ]);
  });

  it('given a body run twice, then it is reported: a cancel kills nothing that ran before it', () => {
    expect(broken(cancelled(make, 2, cancelledAt(make, 2)))).toEqual(['each body runs once per recorded result: o0-make ran 2 times with 0 kills']);
  });

  it('given a cancel that said it cancelled a run that succeeded, or the reverse, then it is reported', () => {
    const succeeded = { ...reference, faults: ['spool cancel (0 ms late): cancelled r'], cancel: cancelledAt([...make, ...put], 1) };
    expect(broken(succeeded)).toEqual(['a cancel says what it did: cancelled r, and the run is succeeded']);
    const ended = { ...succeeded, cancel: cancelledAt([...make, ...put], 1, 'r had already ended (succeeded)\n') };
    expect(broken(ended)).toEqual([]);
    expect(broken(cancelled(make, 1, cancelledAt(make, 1, 'r had already ended (cancelled)\n')))).toEqual([
      'a cancel says what it did: r had already ended (cancelled), and the run is cancelled',
    ]);
  });

  it('given a cancelled run that failed instead, or whose journal strays, then each is reported', () => {
    const failed = { ...cancelled(make, 1, cancelledAt(make, 1)), run: { status: 'failed', error: 'script exited 1' } as RunRecord };
    expect(broken(failed).map((each) => each.split(':')[0])).toEqual(['the run succeeds', 'a cancel says what it did', 'the journal equals an uninterrupted run of the same seed']);
    expect(broken(cancelled(put, 1, cancelledAt(put, 1))).map((each) => each.split(':')[0])).toEqual(["an ended run's journal is the start of an uninterrupted one's"]);
  });

  it('given an ended run still in a lock group\'s lease queue, then it is reported, cancelled or not', () => {
    expect(broken({ ...reference, leasesHeld: ['o3-group'] })).toEqual(['an ended run holds no lock: the run succeeded still holds o3-group']);
    expect(broken({ ...cancelled(make, 1, cancelledAt(make, 1)), leasesHeld: ['o3-group'] })).toEqual(['an ended run holds no lock: the run cancelled still holds o3-group']);
  });
});

/** `activity wait --all` of a failed activity: exit 1 on every pass, and its result keeps why, as text. */
describe("the replay verifier's checks of a wait for every activity", () => {
  const op = { kind: 'activity-all', id: 'o0', payload: Buffer.from([0x77, 0x20, 0x00, 0xff, 0x0a]) } as const;
  const all: Workflow = { seed: 0, ops: [op], checkoutFile: Buffer.alloc(0) };
  const waited = (data: Record<string, unknown>): History => ({
    ...history([entry(1, 'call', 'activity.submit', 'o0'), entry(1, 'result', 'activity.submit', 'o0'), entry(2, 'call', 'activity.wait', '*'), { ...entry(2, 'result', 'activity.wait', '*'), data }], [], [[1, Buffer.alloc(0), 1]]),
    executions: new Map([['o0', 1]]),
  });
  it('given its result names it with its line, then nothing is broken; without the line, or with another exit, it is reported', () => {
    expect(check(all, waited({ failed: ['o0'], total: 1, exitCode: 1, stderrTail: 'o0: w \uFFFD\uFFFD' }), null)).toEqual([]);
    expect(check(all, waited({ failed: ['o0'], total: 1 }), null).map((each) => each.invariant)).toEqual(['a wait for every activity keeps why each failed']);
  });
});
