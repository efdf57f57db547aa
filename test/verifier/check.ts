import type { JournalEntry } from '../../src/store/types.js';
import type { Received } from '../graph/key-server.js';
import { callsOf } from '../support/spool.js';
import { failedLine } from './bash.js';
import { isAnswered, printed, recordedResult } from './deliveries.js';
import type { Op, Workflow } from './generate.js';
import type { History } from './run.js';

/** A broken invariant: which, where, and what was seen. */
export interface Violation {
  invariant: string;
  detail: string;
}

const NONCE = /^[0-9a-f]{16}$/;
const show = (bytes: Buffer | null): string =>
  bytes === null ? 'nothing' : `${bytes.length} bytes ${bytes.subarray(0, 24).toString('hex')}${bytes.length > 24 ? '…' : ''}`;

/** What the script must see from an op, on every pass that reached it: its exit status and a check on its bytes. */
function expected(op: Op, workflow: Workflow, history: History): { code: number; bytes?: (bytes: Buffer) => boolean } {
  switch (op.kind) {
    case 'step':
      return {
        code: op.exit,
        bytes: (bytes) => bytes.subarray(0, op.payload.length).equals(op.payload) && NONCE.test(bytes.subarray(op.payload.length).toString('latin1')),
      };
    case 'put-file':
    case 'put-stdin':
      return { code: 0, bytes: (bytes) => bytes.equals(op.payload) };
    case 'lock':
      return { code: 0, bytes: (bytes) => bytes.equals(op.payload) };
    case 'refused-put':
      return { code: 1 };
    case 'refused-incr':
      return { code: 2 };
    case 'incr':
      return { code: 0, bytes: (bytes) => bytes.toString() === `${op.by}\n` };
    case 'wait-timeout':
      return { code: 124 };
    case 'wait-signal':
    case 'wait-event':
      return { code: 0, bytes: (bytes) => bytes.equals(printed(op)) };
    case 'checkout':
      return { code: 0, bytes: (bytes) => bytes.equals(workflow.checkoutFile) };
    case 'activity':
      return { code: 0, bytes: (bytes) => bytes.equals(op.payload) };
    case 'activity-all':
      return { code: 1, bytes: (bytes) => bytes.length === 0 };
    case 'call-node':
      return { code: 0, bytes: (bytes) => answered(bytes, history.requests, op.id) };
    case 'call-graph':
      return { code: 0, bytes: (bytes) => bytes.toString() === `{"y":"${op.id}"}\n` };
    default:
      return { code: 0 };
  }
}

/** The names a refused op would be recorded under, were it recorded. */
function refusedName(op: Op): string | null {
  if (op.kind === 'refused-put') return op.id;
  if (op.kind === 'refused-incr') return `${op.id}-cell`;
  return null;
}

/** Bodies counted outside the engine: each must run once, and again only when a fault came first. */
function bodiesOf(op: Op): string[] {
  if (op.kind === 'step' || op.kind === 'lock' || op.kind === 'activity' || op.kind === 'activity-all') return [op.id];
  if (op.kind === 'put-file' || op.kind === 'call' || op.kind === 'call-graph') return [`${op.id}-make`];
  return [];
}

/** A journal entry's place: its position and kind (a call, or its result). */
export const entryKey = (entry: { position: number; kind: string }): string => `${entry.position}/${entry.kind}`;

/** Ops whose step makes a file in the working directory that the op's next call reads (a put, a call, a call-graph). */
const readsAFile = (op: Op): boolean => op.kind === 'put-file' || op.kind === 'call' || op.kind === 'call-graph';

/** Where a file-making op's `-make` step is in a journal: its file is read by the call after it. */
const madeAt = (journal: JournalEntry[], op: Op): number | undefined =>
  journal.find((entry) => entry.kind === 'result' && entry.name === `${op.id}-make`)?.position;

/**
 * File-reading ops whose pass was lost after their step made the file and before the call that
 * reads it was recorded (a snapshot has the step and nothing after it). The file was in that pass's
 * directory only: every later pass, in a new one, replays the step without running it, finds no
 * file, and its call is refused (exit 2, nothing recorded). That is the model (docs/artifacts.md,
 * docs/graphs.md), not a replay going wrong.
 */
function filesLost(workflow: Workflow, history: History): Set<string> {
  const lost = new Set<string>();
  for (const op of workflow.ops.filter(readsAFile)) {
    for (const snapshot of history.snapshots) {
      const made = madeAt(snapshot, op);
      if (made !== undefined && !snapshot.some((entry) => entry.position === made + 1)) lost.add(op.id);
    }
  }
  return lost;
}

/**
 * A call-node op's answer, as the script printed it: the key server's 200 for the op's one key. The
 * body carries the key and how many times it had come (1 unless a fault re-sent it).
 */
function answered(bytes: Buffer, requests: Received[], id: string): boolean {
  try {
    const output = JSON.parse(bytes.toString()) as { status?: number; body?: { key?: string } };
    const keys = new Set(requests.filter((request) => request.path === `/${id}`).map((request) => request.key));
    return output.status === 200 && keys.size === 1 && keys.has(output.body?.key ?? null);
  } catch {
    return false;
  }
}

/** Requests a call-node op sent: one key, sent once, again only after a fault (a pass lost before the answer was recorded). */
function sentOnce(op: Op, history: History): string | null {
  if (op.kind !== 'call-node') return null;
  const byKey = new Map<string | null, number>();
  for (const request of history.requests) if (request.path === `/${op.id}`) byKey.set(request.key, (byKey.get(request.key) ?? 0) + 1);
  const [key, sent] = [...byKey][0] ?? [null, 0];
  if (byKey.size > 1) return `${op.id} was sent with ${byKey.size} keys: ${[...byKey.keys()].join(', ')}`;
  if (byKey.size === 1 && !key?.startsWith('spool-')) return `${op.id} was sent with the key ${String(key)}`;
  if (sent > 1 + history.faults.length) return `${op.id} was sent ${sent} times with ${history.faults.length} faults`;
  if (sent === 0 && history.run?.status === 'succeeded') return `${op.id} was never sent`;
  return null;
}

/**
 * The invariants of one run (a history), and of a faulted run against the uninterrupted one.
 * `stderrTails`: the script's client keeps a failed command's stderr tail (the bash forms' clients do; the SDKs send none).
 */
export function check(workflow: Workflow, history: History, reference: History | null, stderrTails = false): Violation[] {
  const violations: Violation[] = [];
  const fail = (invariant: string, detail: string): void => void violations.push({ invariant, detail });

  const lost = filesLost(workflow, history);
  // A script killed alone (its agent alive) ends its pass, and the run fails saying so: the agent reports
  // how the script ended, and a script that did not exit 0 fails its run (settle.ts; docs/operator.md:
  // "anything else Failed"). Unless the kill met a script its agent was ending for a suspension: then
  // the run carries on. Either way the run ends, and `spool resume` refuses the failed run in one line.
  const killedAlone = history.scriptKilled && history.run?.status === 'failed';
  const cancelled = history.cancel !== null && history.run?.status === 'cancelled';
  // The faults that killed something (a cancel kills nothing).
  const kills = history.faults.length - (history.cancel ? 1 : 0);
  if (killedAlone) {
    if (history.run?.error !== 'script killed by SIGKILL') fail('a script killed alone fails its run, saying so', `failed: ${history.run?.error ?? ''}`);
    if (history.resumed && (history.resumed.code === 0 || !/has ended \(failed: script killed by SIGKILL\); there is nothing to resume/.test(history.resumed.output))) {
      fail('spool resume refuses an ended run in one line', `exit ${String(history.resumed.code)}: ${history.resumed.output}`);
    }
  } else if (history.run?.status !== 'succeeded' && !cancelled) fail('the run succeeds', `${history.run?.status ?? 'no run'}: ${history.run?.error ?? ''}`);
  // A person's `spool cancel`: a run it found under way ends cancelled, saying so, and nothing of it
  // goes on once the cancel has answered; one that had ended already stays as it ended.
  if (history.cancel) {
    const said = /^cancelled \S+$/m.test(history.cancel.output);
    if (said !== cancelled) fail('a cancel says what it did', `${history.cancel.output.trim()}, and the run is ${history.run?.status ?? 'missing'}`);
    if (cancelled) checkCancelled(history.cancel, history, fail);
  }
  for (const group of history.leasesHeld) fail('an ended run holds no lock', `the run ${history.run?.status ?? ''} still holds ${group}`);

  for (const op of workflow.ops) {
    const byPass = history.seen.get(op.id);
    const want = expected(op, workflow, history);
    let first: Buffer | null | undefined;
    for (const [pass, seen] of byPass ?? []) {
      // A pass killed or suspended half-way through an op leaves what it saw unfinished: only whole sightings count.
      if (seen.code === null) continue;
      // 69 is the client finding no agent: the harness killed it mid-pass (in a pod, the script dies with it).
      if (seen.code === 69 && history.faults.length > 0) continue;
      // Its file went with a lost pass: refused, as every pass after that one is.
      if (seen.code === 2 && lost.has(op.id)) continue;
      if (seen.code !== want.code) fail('every call answers the same on every pass', `${op.kind} ${op.id} on pass ${pass}: exit ${seen.code}, not ${want.code}`);
      if (want.bytes && seen.bytes && !want.bytes(seen.bytes)) fail('recorded bytes come back as they went', `${op.kind} ${op.id} on pass ${pass}: ${show(seen.bytes)}`);
      if (first === undefined) first = seen.bytes;
      else if (first && seen.bytes && !first.equals(seen.bytes)) {
        fail('a replay answers byte for byte', `${op.kind} ${op.id} on pass ${pass}: ${show(seen.bytes)}, earlier ${show(first)}`);
      }
    }
    if (isAnswered(op)) {
      // The first delivery, taken once: the harness sends a signal twice, and a wait that took the
      // second, or both, or an event sent before it began, records another result.
      const verb = op.kind === 'wait-signal' ? 'wait.signal' : 'wait.event';
      const name = op.kind === 'wait-signal' ? op.id : `${op.id}-type`;
      const results = history.journal.filter((entry) => entry.kind === 'result' && entry.verb === verb && entry.name === name);
      const want = JSON.stringify(recordedResult(op));
      const got = results.map((entry) => JSON.stringify(op.kind === 'wait-signal' ? entry.data : (entry.data.event as { payload?: unknown } | undefined)?.payload));
      if ((history.run?.status === 'succeeded' || got.length > 0) && (got.length !== 1 || got[0] !== want)) {
        fail('a wait records what the harness sent, once', `${op.kind} ${op.id}: recorded ${got.join(', ') || 'nothing'}, sent ${want}`);
      }
    }
    if (op.kind === 'step') {
      // A failed command's stderr tail is kept beside its result, and only a failed one's.
      for (const entry of history.journal.filter((each) => each.kind === 'result' && each.verb === 'step' && each.name === op.id)) {
        const tail = entry.data.stderrTail;
        const kept = op.exit === 0 ? tail === undefined : stderrTails ? tail === failedLine(op.id) : tail === undefined || tail === failedLine(op.id);
        if (!kept) {
          fail("a failed step keeps its stderr's tail, and only a failed one", `step ${op.id} (exit ${op.exit}): stderrTail ${JSON.stringify(tail)}`);
        }
      }
    }
    if (op.kind === 'activity-all' && history.run?.status === 'succeeded') {
      // Its wait's result names it among the failed, with its stderr's line as text (NUL and the byte that is not UTF-8 as U+FFFD).
      const said = `${op.id}: ${op.payload.subarray(0, op.payload.length - 1).toString('latin1').replace(/[\0\xff]/g, '\uFFFD').trim()}`;
      const waits = history.journal.filter((entry) => entry.kind === 'result' && entry.verb === 'activity.wait' && entry.name === '*');
      const kept = waits.some((entry) => (entry.data.failed as string[] | undefined)?.includes(op.id) && String(entry.data.stderrTail ?? '').split('\n').includes(said) && entry.data.exitCode === 1);
      if (!kept) fail('a wait for every activity keeps why each failed', `${op.id}: ${waits.map((entry) => JSON.stringify(entry.data)).join(', ') || 'no result'}`);
    }
    const refused = refusedName(op);
    if (refused && history.journal.some((entry) => entry.name === refused)) {
      fail('a refused call takes no position', `${op.kind} ${op.id} is in the journal as ${refused}`);
    }
    const unsent = sentOnce(op, history);
    if (unsent) fail('an http node is sent once per key', unsent);
    for (const body of bodiesOf(op)) {
      const runs = history.executions.get(body) ?? 0;
      // A killed script's body is not run again: its run failed, or replays what was recorded.
      const most = history.scriptKilled ? 1 : 1 + kills;
      if (runs > most || (history.run?.status === 'succeeded' && runs === 0)) {
        fail('each body runs once per recorded result', `${body} ran ${runs} times with ${kills} kills`);
      }
    }
  }

  // A fresh call's entry is written with its result, or before it (a long step): never a result alone.
  for (const result of history.journal.filter((entry) => entry.kind === 'result')) {
    const call = history.journal.find((entry) => entry.kind === 'call' && entry.position === result.position);
    if (!call || call.verb !== result.verb || call.name !== result.name) {
      fail('every result has its call', `${result.verb} ${result.name} at ${result.position}: ${call ? `the call there is ${call.verb} ${call.name}` : 'no call there'}`);
    }
  }

  const final = new Map(history.journal.map((entry) => [entryKey(entry), entry]));
  history.snapshots.forEach((snapshot, i) => {
    for (const entry of snapshot) {
      const kept = final.get(entryKey(entry));
      if (!kept || kept.verb !== entry.verb || kept.name !== entry.name || JSON.stringify(kept.data) !== JSON.stringify(entry.data)) {
        fail('nothing recorded is lost', `after fault ${i + 1}, ${entry.kind} ${entry.verb} ${entry.name} at ${entry.position} is ${kept ? 'changed' : 'gone'}`);
      }
    }
  });

  if (reference) {
    // A lost file's call is refused on every later pass: the uninterrupted run's, after its step, is not expected.
    const refusedAt = new Set(workflow.ops.filter((op) => lost.has(op.id)).map((op) => (madeAt(reference.journal, op) ?? -2) + 1));
    const want = callsOf(reference.journal.filter((entry) => !refusedAt.has(entry.position))).join(', ');
    const got = callsOf(history.journal).join(', ');
    // A run failed by its killed script, or cancelled, recorded what came before: the start of the uninterrupted run's journal.
    const cut = killedAlone || cancelled;
    if (cut ? !`${want}, `.startsWith(got ? `${got}, ` : '') : want !== got) {
      fail(cut ? "an ended run's journal is the start of an uninterrupted one's" : 'the journal equals an uninterrupted run of the same seed', `uninterrupted: ${want}\n      this run: ${got}`);
    }
  }
  return violations;
}

/**
 * A cancelled run, against the moment its cancel answered: no entry recorded since, and no body
 * started since but the one whose step the agent had already handed out (its result is not kept).
 */
function checkCancelled(cancel: NonNullable<History['cancel']>, history: History, fail: (invariant: string, detail: string) => void): void {
  if (history.run?.error !== 'cancelled') fail('a cancelled run says so', `cancelled: ${history.run?.error ?? ''}`);
  const then = new Set(cancel.journal);
  const later = history.journal.filter((entry) => !then.has(entryKey(entry)));
  if (later.length) fail('a cancelled run records nothing once its cancel answered', later.map((entry) => `${entry.kind} ${entry.verb} ${entry.name} at ${entry.position}`).join(', '));
  const started = [...history.executions].filter(([body, runs]) => runs > (cancel.executions.get(body) ?? 0));
  if (started.length > 1) fail('no body starts once a cancel answered', started.map(([body]) => body).join(', '));
}
