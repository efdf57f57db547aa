import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/common/duration.js';
import { Pass, type PassHost } from '../../src/engine/pass.js';
import type { Answer, Request } from '../../src/engine/protocol.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';

let store: Store;
let clock = new Date('2026-12-02T12:00:00Z');
const host: PassHost = {
  now: () => clock,
  capabilities: ['shell'],
  maxResultBytes: 1024,
  env: 'dev',
  notify: () => undefined,
};

beforeAll(async () => {
  store = await openPgliteStore();
});
afterAll(async () => {
  await store.close();
});

let counter = 0;
async function newRun(subject: string | null = null) {
  const { run } = await store.createRun({
    id: `dev:test:run-${String(++counter).padStart(16, '0')}`,
    project: 'test',
    workflow: 'x.sh',
    interpreter: 'bash -eu',
    script: '',
    subject,
  });
  return run;
}

/** One pass: sends the requests in order, running each `execute` as a command that printed `out`. */
async function pass(runId: string, requests: Request[], options: { lenient?: boolean } = {}): Promise<Answer[]> {
  const run = await store.getRun(runId);
  const p = await Pass.start(store, run!, host, options.lenient ?? false);
  const answers: Answer[] = [];
  for (const request of requests) {
    let answer = await p.handle(request);
    if (answer.status === 'execute') {
      answers.push(answer);
      answer = await p.handle({ verb: 'done', position: answer.position, stdout: `out-${answer.position}\n`, exitCode: 0 });
    }
    answers.push(answer);
    if (answer.status === 'suspended' || (answer.status === 'error' && answer.kind === 'determinism')) break;
  }
  return answers;
}

describe('a pass', () => {
  it('executes a new step once and answers it from the journal on replay, with a stable idempotency key', async () => {
    const run = await newRun();
    const first = await pass(run.id, [{ verb: 'step', name: 'a' }, { verb: 'step', name: 'a' }]);
    expect(first.filter((a) => a.status === 'execute')).toHaveLength(2);
    const keys = first.flatMap((a) => (a.status === 'execute' ? [a.idempotencyKey] : []));
    expect(keys[0]).toMatch(/^spool-[0-9a-f]{32}$/);
    expect(keys[0]).not.toBe(keys[1]); // each reach of a name is its own call site
    const replay = await pass(run.id, [{ verb: 'step', name: 'a' }, { verb: 'step', name: 'a' }]);
    expect(replay).toEqual([
      { status: 'ok', stdout: 'out-0\n', exitCode: 0, replayed: true },
      { status: 'ok', stdout: 'out-1\n', exitCode: 0, replayed: true },
    ]);
  });

  it('fails with a determinism error naming the position, the recorded call and the call reached', async () => {
    const run = await newRun();
    await pass(run.id, [{ verb: 'step', name: 'a' }, { verb: 'step', name: 'b' }]);
    const diverged = await pass(run.id, [{ verb: 'step', name: 'a' }, { verb: 'step', name: 'c' }]);
    const last = diverged.at(-1);
    expect(last).toMatchObject({ status: 'error', kind: 'determinism' });
    expect(last?.status === 'error' && last.message).toMatch(/call 2: the journal recorded `step b` there, but this pass reached `step c`/);
    const lenient = await pass(run.id, [{ verb: 'step', name: 'a' }, { verb: 'step', name: 'c' }], { lenient: true });
    expect(lenient.at(-1)).toMatchObject({ status: 'ok', stdout: 'out-1\n' });
  });

  it('suspends on a sleep until its time, then goes past it', async () => {
    const run = await newRun();
    const [asleep] = await pass(run.id, [{ verb: 'sleep', ms: parseDuration('2s') }]);
    expect(asleep).toEqual({ status: 'suspended', message: 'script suspended awaiting timer 2026-12-02T12:00:02.000Z' });
    clock = new Date(clock.getTime() + 2000);
    expect(await pass(run.id, [{ verb: 'sleep', ms: 2000 }])).toEqual([{ status: 'ok', exitCode: 0 }]);
  });

  it('takes queued signals in order and times out a bounded wait with exit 124', async () => {
    const run = await newRun();
    await store.sendSignal(run.id, 'go', 'first');
    await store.sendSignal(run.id, 'go', 'second');
    const answers = await pass(run.id, [
      { verb: 'wait.signal', name: 'go' },
      { verb: 'wait.signal', name: 'go' },
      { verb: 'wait.signal', name: 'go', timeoutMs: 1000 },
    ]);
    expect(answers.map((a) => a.status === 'ok' && a.stdout)).toEqual(['first\n', 'second\n', false]);
    clock = new Date(clock.getTime() + 1000);
    const [, , timedOut] = await pass(run.id, [
      { verb: 'wait.signal', name: 'go' },
      { verb: 'wait.signal', name: 'go' },
      { verb: 'wait.signal', name: 'go', timeoutMs: 1000 },
    ]);
    expect(timedOut).toMatchObject({ status: 'ok', exitCode: 124, stderr: 'spool: wait signal go timed out after 1s' });
  });

  it('sees only events after the wait began, with its subject or none', async () => {
    const run = await newRun('cust-1');
    await store.emitEvent({ id: 'early', project: 'test', type: 'paid', subject: 'cust-1', payload: 1 });
    expect((await pass(run.id, [{ verb: 'wait.event', type: 'paid' }]))[0]?.status).toBe('suspended');
    await store.emitEvent({ id: 'other', project: 'test', type: 'paid', subject: 'cust-2', payload: 2 });
    expect((await pass(run.id, [{ verb: 'wait.event', type: 'paid' }]))[0]?.status).toBe('suspended');
    await store.emitEvent({ id: 'mine', project: 'test', type: 'paid', subject: 'cust-1', payload: { n: 3 } });
    expect(await pass(run.id, [{ verb: 'wait.event', type: 'paid' }])).toEqual([{ status: 'ok', stdout: '{"n":3}\n', exitCode: 0, replayed: false }]);
  });

  it('records a claim, so the winner still wins on replay and a loser exits 3', async () => {
    const [a, b] = [await newRun(), await newRun()];
    const claim: Request = { verb: 'state.add', key: 'order-1042', entity: 'orders' };
    expect((await pass(a.id, [claim]))[0]).toMatchObject({ exitCode: 0 });
    expect((await pass(b.id, [claim]))[0]).toMatchObject({ exitCode: 3 });
    expect((await pass(a.id, [claim]))[0]).toMatchObject({ exitCode: 0, replayed: true });
  });

  it('refuses a reused --op and records nothing for it', async () => {
    const run = await newRun();
    const answers = await pass(run.id, [
      { verb: 'state.incr', key: 'n', by: 1, op: 'ticket' },
      { verb: 'state.incr', key: 'n', by: 1, op: 'ticket' },
    ]);
    expect(answers[0], JSON.stringify(answers[0])).toMatchObject({ status: 'ok', stdout: '1\n' });
    expect(answers[1]).toMatchObject({ status: 'error', kind: 'usage', exitCode: 2 });
    expect((await store.readJournal(run.id)).filter((e) => e.kind === 'call')).toHaveLength(1);
  });

  it('grants a lock in arrival order and hands it on when the holder finishes its command', async () => {
    const [a, b] = [await newRun(), await newRun()];
    const lock: Request = { verb: 'lock', group: 'customer-acme', command: true };
    const holder = await Pass.start(store, a, host);
    const granted = await holder.handle(lock);
    expect(granted.status).toBe('execute');
    expect((await pass(b.id, [lock]))[0]).toMatchObject({ status: 'suspended', message: 'script suspended awaiting lease customer-acme' });
    if (granted.status === 'execute') await holder.handle({ verb: 'done', position: granted.position, stdout: '', exitCode: 0 });
    expect((await pass(b.id, [lock]))[0]?.status).toBe('execute');
  });

  it('refuses a result over the size limit with advice', async () => {
    const run = await newRun();
    const p = await Pass.start(store, run, host);
    const answer = await p.handle({ verb: 'step', name: 'big' });
    const done = await p.handle({ verb: 'done', position: answer.status === 'execute' ? answer.position : -1, stdout: 'x'.repeat(2000), exitCode: 0 });
    expect(done).toMatchObject({ status: 'error', kind: 'limit' });
    expect(done.status === 'error' && done.message).toMatch(/over the 1024-byte limit .* record its path or an id instead/);
  });
});

describe('durations', () => {
  it('parse the documented forms and refuse others', () => {
    expect([parseDuration('500ms'), parseDuration('30s'), parseDuration('5m'), parseDuration('1h30m'), parseDuration('14d')]).toEqual([
      500, 30_000, 300_000, 5_400_000, 1_209_600_000,
    ]);
    for (const bad of ['5', '5x', '5 minutes', '', 'm5']) expect(() => parseDuration(bad)).toThrow(/duration/);
  });
});
