import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPgliteStore } from '../src/store/pglite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import { shardOfRun } from '../src/store/run-shards.js';
import type { SqlClient } from '../src/store/sql.js';
import type { SqlStore } from '../src/store/sql-store.js';
import type { JournalEntry, NewActivity, NewRun, RunPageFilter, RunSort, ScheduleRecord, Store, Wait } from '../src/store/store.js';
import { partitionJournal } from './support/partition-journal.js';
import { startPostgres, type TestPostgres } from './support/postgres.js';

const SECOND = 1000;
const at = (base: Date, ms: number): Date => new Date(base.getTime() + ms);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function newRun(id: string, extra: Partial<NewRun> = {}): NewRun {
  return { id, project: 'p1', workflow: 'wf', interpreter: 'bash', script: 'echo hi', ...extra };
}

function entry(runId: string, position: number, kind: JournalEntry['kind'], data: Record<string, unknown> = {}) {
  return { runId, position, kind, verb: 'step', name: `s${position}`, occurrence: 0, data };
}

function activity(id: string, extra: Partial<NewActivity> = {}): NewActivity {
  return {
    id,
    runId: 'r1',
    name: id,
    argv: ['make', id],
    cwd: null,
    requires: [],
    maxAttempts: 3,
    backoffMs: 100,
    retryOnExit: null,
    ...extra,
  };
}

/**
 * What every Store driver must do. Each test gets a fresh, empty store from `open`, because several
 * methods (due runs, activity claims, event seqs) look across all runs.
 */
function storeContract(name: string, open: () => Promise<Store>, close: (store: Store) => Promise<void>): void {
  describe(name, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    }, 60_000);
    afterEach(async () => {
      await close(store);
    });

    describe('runs', () => {
      it('creates a pending run and reads it back', async () => {
        const { run, created } = await store.createRun(
          newRun('r1', {
            input: { n: 1, tags: ['a'] },
            subject: 'order-1',
            parentId: 'r0',
            handler: 'h',
            lenient: true,
            cwd: '/w',
            runner: { image: 'runner:2', env: [{ name: 'A', value: '1' }] },
          }),
        );
        expect(created).toBe(true);
        expect(run).toMatchObject({
          id: 'r1',
          project: 'p1',
          workflow: 'wf',
          interpreter: 'bash',
          script: 'echo hi',
          input: { n: 1, tags: ['a'] },
          subject: 'order-1',
          parentId: 'r0',
          handler: 'h',
          idempotencyKey: null,
          status: 'pending',
          awaiting: null,
          wait: null,
          wakeAt: null,
          passes: 0,
          error: null,
          outputs: {},
          lenient: true,
          cwd: '/w',
          runner: { image: 'runner:2', env: [{ name: 'A', value: '1' }] },
          finishedAt: null,
        });
        expect(run.createdAt).toBeInstanceOf(Date);
        expect(await store.getRun('r1')).toEqual(run);
        expect(await store.getRun('nope')).toBeNull();
      });

      it('answers the existing run for the same id', async () => {
        await store.createRun(newRun('r1', { workflow: 'first' }));
        const again = await store.createRun(newRun('r1', { workflow: 'second' }));
        expect(again.created).toBe(false);
        expect(again.run.workflow).toBe('first');
      });

      it('answers the existing run for the same idempotency key in the project', async () => {
        await store.createRun(newRun('r1', { idempotencyKey: 'k' }));
        const again = await store.createRun(newRun('r2', { idempotencyKey: 'k' }));
        expect(again).toMatchObject({ created: false, run: { id: 'r1', idempotencyKey: 'k' } });
        expect(await store.getRun('r2')).toBeNull();
        const elsewhere = await store.createRun(newRun('r3', { project: 'p2', idempotencyKey: 'k' }));
        expect(elsewhere.created).toBe(true);
      });

      it('lists runs newest first, filtered by project, status and parent, up to a limit', async () => {
        await store.createRun(newRun('a'));
        await sleep(5);
        await store.createRun(newRun('b', { parentId: 'a' }));
        await sleep(5);
        await store.createRun(newRun('c', { parentId: 'a' }));
        await store.createRun(newRun('x', { project: 'p2' }));
        await store.updateRun('b', { status: 'succeeded' });
        const ids = async (filter?: Parameters<Store['listRuns']>[0]) =>
          (await store.listRuns(filter)).map((r) => r.id);

        expect(await ids({ project: 'p1' })).toEqual(['c', 'b', 'a']);
        expect((await ids()).sort()).toEqual(['a', 'b', 'c', 'x']);
        expect(await ids({ project: 'p1', status: ['succeeded'] })).toEqual(['b']);
        expect(await ids({ project: 'p1', status: ['pending', 'running'] })).toEqual(['c', 'a']);
        expect(await ids({ parentId: 'a' })).toEqual(['c', 'b']);
        expect(await ids({ project: 'p1', limit: 2 })).toEqual(['c', 'b']);
      });

      it('updates only the patched fields, jsonb and times included', async () => {
        const { run } = await store.createRun(newRun('r1'));
        const wait: Wait = {
          kind: 'event',
          type: 'paid',
          subject: null,
          afterSeq: 7,
          deadline: '2030-01-01T00:00:00.000Z',
        };
        const wakeAt = new Date('2030-01-01T00:00:00.000Z');
        await store.updateRun('r1', { status: 'waiting', awaiting: 'event paid', wait, wakeAt });
        const waiting = await store.getRun('r1');
        expect(waiting).toMatchObject({ status: 'waiting', awaiting: 'event paid', wait, wakeAt, error: null });
        expect(waiting!.updatedAt.getTime()).toBeGreaterThanOrEqual(run.updatedAt.getTime());

        const finishedAt = new Date('2031-02-03T04:05:06.789Z');
        await store.updateRun('r1', {
          status: 'failed',
          error: 'boom',
          outputs: { url: 'x' },
          finishedAt,
          wait: null,
          wakeAt: null,
        });
        expect(await store.getRun('r1')).toMatchObject({
          status: 'failed',
          awaiting: 'event paid',
          error: 'boom',
          outputs: { url: 'x' },
          finishedAt,
          wait: null,
          wakeAt: null,
        });
      });

      it('starts a pass only from pending or waiting, counting passes', async () => {
        await store.createRun(newRun('r1', { notBefore: new Date('2000-01-01T00:00:00Z') }));
        const first = await store.startPass('r1');
        expect(first?.run).toMatchObject({ id: 'r1', status: 'running', passes: 1, wakeAt: null });
        expect(first?.journal).toEqual([]);
        expect(await store.startPass('r1')).toBeNull();

        await store.updateRun('r1', {
          status: 'waiting',
          awaiting: 'timer',
          wait: { kind: 'timer', until: 'x' },
          wakeAt: new Date(),
        });
        expect((await store.startPass('r1'))?.run).toMatchObject({
          status: 'running',
          passes: 2,
          wakeAt: null,
          awaiting: null,
          wait: null,
        });

        await store.updateRun('r1', { status: 'succeeded' });
        expect(await store.startPass('r1')).toBeNull();
        expect((await store.getRun('r1'))!.passes).toBe(2);
        expect(await store.startPass('nope')).toBeNull();
      });

      it('given claims of several runs at once (one statement), then each is claimed once, with its own journal; a run asked for twice goes to one ask', async () => {
        for (const id of ['c1', 'c2', 'c3']) await store.createRun(newRun(id));
        await store.appendJournalEntries([entry('c2', 0, 'call', { argv: ['true'] }), entry('c2', 0, 'result', { exitCode: 0 })]);
        await store.createRun(newRun('done'));
        await store.updateRun('done', { status: 'succeeded' });
        const claims = await Promise.all(['c1', 'c2', 'c3', 'c2', 'done', 'nope'].map((id) => store.startPass(id)));
        expect(claims.map((c) => c?.run.id ?? null)).toEqual(['c1', 'c2', 'c3', null, null, null]);
        expect(claims.map((c) => c?.journal.length ?? null)).toEqual([0, 2, 0, null, null, null]);
        expect(claims[2]?.run).toMatchObject({ status: 'running', passes: 1 });
        expect((await store.getRun('c2'))!.passes).toBe(1);
      });

      it('answers the journal a pass starts from: nothing for a new run, what earlier passes or a rerun copied recorded', async () => {
        await store.createRun(newRun('r1'));
        expect((await store.startPass('r1'))?.journal).toEqual([]);
        await store.appendJournalEntries([entry('r1', 0, 'call', { argv: ['true'] }), entry('r1', 0, 'result', { exitCode: 0 })]);
        await store.updateRun('r1', { status: 'waiting', wakeAt: new Date() });
        const second = await store.startPass('r1');
        expect(second?.journal.map(({ position, kind, data }) => ({ position, kind, data }))).toEqual([
          { position: 0, kind: 'call', data: { argv: ['true'] } },
          { position: 0, kind: 'result', data: { exitCode: 0 } },
        ]);

        await store.createRun(newRun('r2'));
        await store.copyJournal('r1', 'r2', 1);
        expect((await store.startPass('r2'))?.journal).toHaveLength(2);
      });

      it('settles a run unless it was cancelled meanwhile, answering it as updated', async () => {
        await store.createRun(newRun('r1'));
        await store.startPass('r1');
        expect(await store.updateRunUnlessCancelled('r1', { status: 'waiting', awaiting: 'timer' })).toMatchObject({
          id: 'r1',
          status: 'waiting',
          awaiting: 'timer',
        });
        await store.updateRun('r1', { status: 'cancelled', error: 'by hand' });
        expect(await store.updateRunUnlessCancelled('r1', { status: 'succeeded', error: null })).toBeNull();
        expect(await store.getRun('r1')).toMatchObject({ status: 'cancelled', error: 'by hand' });
        expect(await store.updateRunUnlessCancelled('nope', { status: 'succeeded' })).toBeNull();
      });

      it('lists due runs: pending ones and waiting ones whose wakeAt has come', async () => {
        const now = new Date();
        await store.createRun(newRun('pending'));
        await store.createRun(newRun('not-before-past', { notBefore: at(now, -SECOND) }));
        await store.createRun(newRun('not-before-future', { notBefore: at(now, 60 * SECOND) }));
        for (const [id, status, wakeAt] of [
          ['woken', 'waiting', at(now, -SECOND)],
          ['woken-exactly-now', 'waiting', now],
          ['sleeping', 'waiting', at(now, 60 * SECOND)],
          ['waiting-forever', 'waiting', null],
          ['running', 'running', at(now, -SECOND)],
          ['done', 'succeeded', at(now, -SECOND)],
        ] as const) {
          await store.createRun(newRun(id));
          await store.updateRun(id, { status, wakeAt });
        }

        expect((await store.listDueRuns(now, 100)).sort()).toEqual(
          ['not-before-past', 'pending', 'woken', 'woken-exactly-now'].sort(),
        );
        expect(await store.listDueRuns(now, 2)).toHaveLength(2);
        expect(await store.listDueRuns(at(now, 61 * SECOND), 100)).toContain('sleeping');
      });

      it('answers woken runs before new ones, each oldest first, so a signal is not queued behind a backlog of new runs', async () => {
        const now = new Date();
        for (const id of ['new-1', 'new-2']) await store.createRun(newRun(id));
        for (const [id, wakeAt] of [
          ['woken-later', at(now, 5 * SECOND)],
          ['woken-earlier', at(now, 4 * SECOND)],
        ] as const) {
          await store.createRun(newRun(id));
          await store.updateRun(id, { status: 'waiting', wakeAt });
        }
        // The new runs have been due since they were made, seconds before the others woke.
        const later = at(now, 10 * SECOND);

        expect(await store.listDueRuns(later, 100)).toEqual(['woken-earlier', 'woken-later', 'new-1', 'new-2']);
        expect(await store.listDueRuns(later, 1)).toEqual(['woken-earlier']);
      });

      it('wakes a waiting run that is not yet due, and nothing else', async () => {
        const now = new Date();
        for (const [id, status, wakeAt] of [
          ['sleeping', 'waiting', at(now, 60 * SECOND)],
          ['waiting-forever', 'waiting', null],
          ['already-due', 'waiting', at(now, -SECOND)],
          ['running', 'running', null],
        ] as const) {
          await store.createRun(newRun(id));
          await store.updateRun(id, { status, wakeAt });
        }
        await store.createRun(newRun('pending'));

        expect(await store.wakeRun('sleeping', now)).toBe(true);
        expect(await store.wakeRun('waiting-forever', now)).toBe(true);
        expect(await store.wakeRun('already-due', now)).toBe(false);
        expect(await store.wakeRun('running', now)).toBe(false);
        expect(await store.wakeRun('pending', now)).toBe(false);
        expect(await store.wakeRun('nope', now)).toBe(false);
        expect((await store.listDueRuns(now, 100)).sort()).toEqual(
          ['already-due', 'pending', 'sleeping', 'waiting-forever'].sort(),
        );
        expect((await store.getRun('sleeping'))!.status).toBe('waiting');
      });

      it('says, per project, since when its oldest open-ended wait has lasted: no wake time (since suspended), or a wake time already past (since then)', async () => {
        const now = new Date();
        expect(await store.openWaitsSince(now)).toEqual([]);
        await store.createRun(newRun('unbounded', { project: 'a' }));
        await store.updateRun('unbounded', { status: 'waiting', awaiting: 'signal go', wakeAt: null });
        const suspended = (await store.getRun('unbounded'))!.updatedAt;
        for (const [id, project, status, wakeAt] of [
          ['later', 'a', 'waiting', null],
          ['sleeping', 'b', 'waiting', at(now, 60 * SECOND)],
          ['overdue', 'c', 'waiting', at(now, -30 * SECOND)],
          ['busy', 'd', 'running', null],
        ] as const) {
          await sleep(5);
          await store.createRun(newRun(id, { project }));
          await store.updateRun(id, { status, wakeAt });
        }
        const since = await store.openWaitsSince(now);
        expect(since.map((w) => w.project)).toEqual(['a', 'c']);
        expect(since[0]?.since.getTime()).toBe(suspended.getTime());
        expect(since[1]?.since.getTime()).toBe(at(now, -30 * SECOND).getTime());
      });

      it('lists the waiting runs of a project that wait for an event of one type, oldest first, and no other', async () => {
        const event = (type: string): Wait => ({ kind: 'event', type, subject: null, afterSeq: 0 });
        for (const [id, project, status, wait] of [
          ['first', 'p1', 'waiting', event('order.placed')],
          ['other-type', 'p1', 'waiting', event('order.paid')],
          ['signal', 'p1', 'waiting', { kind: 'signal', name: 'order.placed' }],
          ['other-project', 'p2', 'waiting', event('order.placed')],
          ['running', 'p1', 'running', event('order.placed')],
          ['second', 'p1', 'waiting', event('order.placed')],
        ] as const) {
          await sleep(2);
          await store.createRun(newRun(id, { project }));
          await store.updateRun(id, { status, wait });
        }
        expect(await store.listEventWaiters('p1', 'order.placed')).toEqual(['first', 'second']);
        expect(await store.listEventWaiters('p2', 'order.paid')).toEqual([]);
      });

      it("lists a project's waiting approval gates (runs a run started, whose input names an approval), oldest first; and answers runs' summaries by id", async () => {
        const gate = { approval: { job: 'ask', prompt: 'ok?' } };
        for (const [id, project, status, parentId, input] of [
          ['first', 'p1', 'waiting', 'pipeline', gate],
          ['not-a-gate', 'p1', 'waiting', 'pipeline', { approval_like: 1 }],
          ['no-parent', 'p1', 'waiting', null, gate],
          ['answered', 'p1', 'succeeded', 'pipeline', gate],
          ['other-project', 'p2', 'waiting', 'pipeline', gate],
          ['second', 'p1', 'waiting', 'pipeline', gate],
        ] as const) {
          await sleep(2);
          await store.createRun(newRun(id, { project, parentId, input }));
          await store.updateRun(id, { status });
        }
        expect((await store.listWaitingGateRuns('p1')).map((run) => run.id)).toEqual(['first', 'second']);
        const summaries = await store.runSummaries(['answered', 'first', 'nowhere']);
        expect(summaries.map((run) => [run.id, run.status]).sort()).toEqual([['answered', 'succeeded'], ['first', 'waiting']]);
        expect(await store.runSummaries([])).toEqual([]);
      });

      it('deletes whole run trees that finished before the cutoff, with their journals, signals and logs, and nothing else', async () => {
        const now = new Date();
        const old = at(now, -100 * SECOND);
        for (const [id, parentId, status, finishedAt] of [
          ['gone', null, 'succeeded', old],
          ['gone-child', 'gone', 'failed', at(old, -SECOND)],
          ['busy', null, 'succeeded', old],
          ['busy-child', 'busy', 'waiting', null],
          ['young', null, 'cancelled', at(now, -SECOND)],
          ['late-child-of', null, 'succeeded', old],
          ['late-child', 'late-child-of', 'succeeded', at(now, -SECOND)],
          ['running', null, 'running', null],
        ] as const) {
          await store.createRun(newRun(id, parentId ? { parentId } : {}));
          await store.updateRun(id, { status, finishedAt });
          await store.appendJournal(entry(id, 0, 'call'));
          await store.appendLog(id, 1, `${id}\n`);
          await store.sendSignal(id, 'go', 'x');
          // An artifact, and a part a crashed put left under the run's prefix.
          await store.artifacts.blobs.writePart(`${id}/1/1/`, 0, new Uint8Array([1, 2, 3]));
          await store.artifacts.blobs.writePart(`${id}/2/1/`, 0, new Uint8Array([4]));
          await store.artifacts.record({ runId: id, name: 'build.tar', position: 1, size: 3, sha256: 'x', contentType: 'application/x-tar', blobKey: `${id}/1/1/`, parts: 1 });
        }
        expect(await store.deleteRunsFinishedBefore(at(now, -10 * SECOND), 100)).toBe(2);
        for (const id of ['gone', 'gone-child']) {
          expect(await store.getRun(id)).toBeNull();
          expect(await store.readJournal(id)).toEqual([]);
          expect(await store.readLogs(id)).toEqual([]);
          expect(await store.takeSignal(id, 'go')).toBeNull();
          expect(await store.artifacts.get(id, 'build.tar')).toBeNull();
          expect(await store.artifacts.blobs.readPart(`${id}/1/1/`, 0)).toBeNull();
          expect(await store.artifacts.blobs.readPart(`${id}/2/1/`, 0)).toBeNull();
        }
        for (const id of ['busy', 'busy-child', 'young', 'late-child-of', 'late-child', 'running']) {
          expect((await store.getRun(id))?.id).toBe(id);
          expect(await store.readJournal(id)).toHaveLength(1);
          expect(await store.readLogs(id)).toHaveLength(1);
          expect((await store.artifacts.get(id, 'build.tar'))?.size).toBe(3);
          expect(await store.artifacts.blobs.readPart(`${id}/2/1/`, 0)).not.toBeNull();
        }
        expect(await store.deleteRunsFinishedBefore(at(now, -10 * SECOND), 100)).toBe(0);
      });

      it('recovers runs left running so they are due again, optionally only the given ones', async () => {
        const now = new Date();
        for (const id of ['a', 'b', 'c']) {
          await store.createRun(newRun(id));
          await store.startPass(id);
        }
        await store.updateRun('c', { wait: { kind: 'timer', until: 'x' } });
        await store.createRun(newRun('pending'));
        await store.createRun(newRun('done'));
        await store.updateRun('done', { status: 'succeeded' });

        expect(await store.recoverInterruptedRuns(now, ['a', 'pending', 'done'])).toEqual(['a']);
        expect(await store.getRun('a')).toMatchObject({ status: 'waiting', wait: null, wakeAt: now });
        expect((await store.getRun('b'))!.status).toBe('running');

        expect((await store.recoverInterruptedRuns(now)).sort()).toEqual(['b', 'c']);
        expect(await store.getRun('c')).toMatchObject({ status: 'waiting', wait: null });
        expect((await store.getRun('done'))!.status).toBe('succeeded');
        expect((await store.listDueRuns(now, 100)).sort()).toEqual(['a', 'b', 'c', 'pending']);
        expect(await store.recoverInterruptedRuns(now)).toEqual([]);
        expect((await store.startPass('a'))?.run).toMatchObject({ status: 'running', passes: 2 });
      });

      it('lists due runs and recovers interrupted ones of some shards only, each run in the shard the operator computes (shardOfRun)', async () => {
        const now = new Date();
        const ids = Array.from({ length: 24 }, (_, i) => `k8s:p${i % 3}:run-${i}`);
        for (const id of ids) await store.createRun(newRun(id));
        const count = 3;
        const inShards = (owned: number[]) => ids.filter((id) => owned.includes(shardOfRun(id, count))).sort();
        // Every shard has some of the 24 runs, or the filter would be tested on nothing.
        for (const shard of [0, 1, 2]) expect(inShards([shard]).length).toBeGreaterThan(0);
        expect((await store.listDueRuns(now, 100, { count, owned: [1] })).sort()).toEqual(inShards([1]));
        expect((await store.listDueRuns(now, 100, { count, owned: [0, 2] })).sort()).toEqual(inShards([0, 2]));
        expect(await store.listDueRuns(now, 100, { count, owned: [] })).toEqual([]);
        expect((await store.listDueRuns(now, 100)).sort()).toEqual([...ids].sort());

        for (const id of ids) await store.startPass(id);
        expect((await store.recoverInterruptedRuns(now, undefined, { count, owned: [2] })).sort()).toEqual(inShards([2]));
        for (const id of inShards([0, 1])) expect((await store.getRun(id))!.status).toBe('running');
        expect((await store.recoverInterruptedRuns(now, undefined, { count, owned: [0, 1] })).sort()).toEqual(inShards([0, 1]));
      });

      it("reads the unfinished runs' states, then those written since that read (finished ones too), each read with the database's time of it", async () => {
        const ids = (read: { states: { id: string; status: string }[] }) => read.states.map((state) => `${state.id} ${state.status}`).sort();
        await store.createRun(newRun('k8s:p1:asleep'));
        await store.updateRun('k8s:p1:asleep', { status: 'waiting', wait: { kind: 'signal', name: 'go' } });
        await store.createRun(newRun('k8s:p1:going'));
        await store.createRun(newRun('k8s:p1:done'));
        await store.updateRun('k8s:p1:done', { status: 'succeeded' });
        await store.createRun(newRun('local:p1:elsewhere'));
        await sleep(3);
        const full = await store.listUnfinishedRunStates('k8s:');
        expect(ids(full)).toEqual(['k8s:p1:asleep waiting', 'k8s:p1:going pending']);
        expect((await store.listRunStatesChangedSince('k8s:', full.readAt)).states).toEqual([]);

        await store.updateRun('k8s:p1:going', { status: 'failed', error: 'boom' });
        await store.updateRun('local:p1:elsewhere', { status: 'failed' });
        // A read's time is a Date, to the millisecond: a write in the same millisecond as the read
        // after it is found again by the next read (harmless: the sweep reads with an overlap
        // anyway), so each read here comes a few milliseconds after the writes before it.
        await sleep(3);
        const changed = await store.listRunStatesChangedSince('k8s:', full.readAt);
        expect(changed.states).toEqual([{ id: 'k8s:p1:going', status: 'failed', awaiting: null, wait: null, passes: 0, error: 'boom' }]);
        expect(changed.readAt.getTime()).toBeGreaterThan(full.readAt.getTime());

        // Every write of a run's state counts: a pass started, and one recovered after its leader went.
        await sleep(3);
        await store.startPass('k8s:p1:asleep');
        await sleep(3);
        const started = await store.listRunStatesChangedSince('k8s:', changed.readAt);
        expect(ids(started)).toEqual(['k8s:p1:asleep running']);
        await sleep(3);
        await store.recoverInterruptedRuns(new Date(), ['k8s:p1:asleep']);
        await sleep(3);
        expect(ids(await store.listRunStatesChangedSince('k8s:', started.readAt))).toEqual(['k8s:p1:asleep waiting']);
        // From an earlier point, everything written since it.
        expect(ids(await store.listRunStatesChangedSince('k8s:', full.readAt))).toEqual(['k8s:p1:asleep waiting', 'k8s:p1:going failed']);
      });
    });

    describe('the runs list', () => {
      /** Runs made a few ms apart, so each has its own creation time; answers them as created. */
      async function made(runs: NewRun[]) {
        const records = [];
        for (const run of runs) {
          records.push((await store.createRun(run)).run);
          await sleep(3);
        }
        return records;
      }
      const ids = (page: { runs: { id: string }[] }): string[] => page.runs.map((run) => run.id);

      it('finds text in the id, workflow, subject, input, outputs and a step label or annotation, case-insensitively', async () => {
        await made([
          newRun('dev:p1:run-aaaa', { workflow: 'Deploy-Prod.sh' }),
          newRun('dev:p1:run-bbbb', { subject: 'Order-42' }),
          newRun('dev:p1:run-cccc', { input: { customer: 'ACME GmbH', pct: '100%' } }),
          newRun('dev:p1:run-dddd'),
          newRun('dev:p1:run-eeee'),
          newRun('dev:p1:run-ffff'),
          newRun('dev:p1:run-gggg', { project: 'p2', workflow: 'deploy.sh' }),
        ]);
        await store.updateRun('dev:p1:run-dddd', { outputs: { url: 'https://Example.test/report' } });
        await store.appendJournal({ ...entry('dev:p1:run-eeee', 0, 'call', { label: 'Charge card' }) });
        await store.appendJournal({ runId: 'dev:p1:run-ffff', position: 0, kind: 'call', verb: 'annotate', name: '', occurrence: 0, data: { text: 'Shipped to Berlin' } });
        const find = async (text: string, extra: Partial<RunPageFilter> = {}) => ids(await store.pageRuns({ project: 'p1', text, limit: 50, ...extra })).sort();

        expect(await find('RUN-BB')).toEqual(['dev:p1:run-bbbb']);
        expect(await find('deploy')).toEqual(['dev:p1:run-aaaa']);
        expect(await find('order-4')).toEqual(['dev:p1:run-bbbb']);
        expect(await find('acme gmbh')).toEqual(['dev:p1:run-cccc']);
        expect(await find('example.TEST')).toEqual(['dev:p1:run-dddd']);
        expect(await find('charge')).toEqual(['dev:p1:run-eeee']);
        expect(await find('berlin')).toEqual(['dev:p1:run-ffff']);
        // `%` and `_` are the characters themselves, not patterns.
        expect(await find('0%')).toEqual(['dev:p1:run-cccc']);
        expect(await find('%')).toEqual(['dev:p1:run-cccc']);
        expect(await find('_')).toEqual([]);
        expect(await find('nowhere')).toEqual([]);
        expect(await find('deploy', { project: undefined })).toEqual(['dev:p1:run-aaaa', 'dev:p1:run-gggg']);
        expect(await find('run-', { status: ['succeeded'] })).toEqual([]);
      });

      it('keeps runs created in a time range: since included, until not', async () => {
        const [a, b, c] = await made([newRun('a'), newRun('b'), newRun('c')]);
        const between = async (since?: Date, until?: Date) => ids(await store.pageRuns({ ...(since ? { since } : {}), ...(until ? { until } : {}), limit: 50 }));
        expect(await between(b!.createdAt)).toEqual(['c', 'b']);
        expect(await between(undefined, b!.createdAt)).toEqual(['a']);
        expect(await between(a!.createdAt, c!.createdAt)).toEqual(['b', 'a']);
        expect(await between(at(c!.createdAt, SECOND))).toEqual([]);
      });

      it('sorts by creation, last change or duration, and pages each order without a repeat or a gap', async () => {
        const runs = await made(['a', 'b', 'c', 'd', 'e'].map((id) => newRun(id)));
        const created = new Map(runs.map((run) => [run.id, run.createdAt]));
        // Durations: a 5 s, b 1 s, c 3 s; d and e still going (the longest). Last changed: c, then a, then b.
        for (const [id, ms] of [['c', 3], ['a', 5], ['b', 1]] as const) {
          await store.updateRun(id, { status: 'succeeded', finishedAt: at(created.get(id)!, ms * SECOND) });
          await sleep(3);
        }
        const everyPage = async (sort: RunSort, limit: number) => {
          const seen: string[] = [];
          let before: string | undefined;
          do {
            const page = await store.pageRuns({ sort, limit, ...(before ? { before } : {}) });
            seen.push(...ids(page));
            before = page.next ?? undefined;
          } while (before);
          return seen;
        };
        const orders: [RunSort, string[]][] = [
          ['-created', ['e', 'd', 'c', 'b', 'a']],
          ['created', ['a', 'b', 'c', 'd', 'e']],
          ['-updated', ['b', 'a', 'c', 'e', 'd']],
          ['updated', ['d', 'e', 'c', 'a', 'b']],
          ['duration', ['b', 'c', 'a', 'd', 'e']],
          ['-duration', ['e', 'd', 'a', 'c', 'b']],
        ];
        for (const [sort, order] of orders) {
          expect(await everyPage(sort, 50), sort).toEqual(order);
          expect(await everyPage(sort, 2), `${sort} by twos`).toEqual(order);
        }
        const { next } = await store.pageRuns({ sort: 'duration', limit: 1 });
        await expect(store.pageRuns({ sort: '-created', limit: 1, before: next! })).rejects.toThrow(/cursor of the order 'duration'/);
        await expect(store.pageRuns({ limit: 1, before: 'bm9wZQ' })).rejects.toThrow(/not a page cursor/);
      });

      it('counts the runs the search finds in each status, whatever the status filter', async () => {
        await made([newRun('r1', { workflow: 'build.sh' }), newRun('r2', { workflow: 'build.sh' }), newRun('r3', { workflow: 'build.sh' }), newRun('r4', { workflow: 'other.sh' })]);
        await store.updateRun('r1', { status: 'failed' });
        await store.updateRun('r2', { status: 'failed' });
        await store.updateRun('r4', { status: 'failed' });
        expect(await store.countRuns({ text: 'BUILD' })).toEqual({ pending: 1, running: 0, waiting: 0, succeeded: 0, failed: 2, cancelled: 0 });
        expect(await store.countRuns({ project: 'p2' })).toEqual({ pending: 0, running: 0, waiting: 0, succeeded: 0, failed: 0, cancelled: 0 });
        expect((await store.countRuns({})).failed).toBe(3);
      });

      it("cuts a window into slices of runs created in each, by the status they have now, and gives the percentiles of the finished runs' durations", async () => {
        const runs = await made([...['a', 'b', 'c', 'd', 'e'].map((id) => newRun(id, { workflow: 'build.sh' })), newRun('x', { workflow: 'other.sh' })]);
        const created = new Map(runs.map((run) => [run.id, run.createdAt]));
        // a, b, c succeeded in 1, 2 and 3 s; d failed after 10 s; e still pending; x another workflow's.
        for (const [id, status, ms] of [['a', 'succeeded', 1], ['b', 'succeeded', 2], ['c', 'succeeded', 3], ['d', 'failed', 10], ['x', 'succeeded', 60]] as const)
          await store.updateRun(id, { status, finishedAt: at(created.get(id)!, ms * SECOND) });
        const HOUR = 3600 * SECOND;
        const since = at(runs[0]!.createdAt, -1.5 * HOUR);
        const until = at(runs[0]!.createdAt, 0.5 * HOUR);
        const stats = await store.runStats({ workflow: 'build.sh', since, until }, HOUR);
        expect(stats.buckets.map((bucket) => bucket.start)).toEqual([since, at(since, HOUR)]);
        expect(stats.buckets[0]!.counts).toEqual({ pending: 0, running: 0, waiting: 0, succeeded: 0, failed: 0, cancelled: 0 });
        expect(stats.buckets[1]!.counts).toEqual({ pending: 1, running: 0, waiting: 0, succeeded: 3, failed: 1, cancelled: 0 });
        // Interpolated between the four durations, 1, 2, 3 and 10 s (the database keeps microseconds: within a millisecond).
        const { runs: finished, ...percentiles } = stats.durations!;
        expect(finished).toBe(4);
        for (const [name, ms] of Object.entries({ p50Ms: 2500, p90Ms: 7900, p99Ms: 9790, maxMs: 10_000 }))
          expect(Math.abs(percentiles[name as keyof typeof percentiles] - ms), name).toBeLessThanOrEqual(1);
        // A window before any run: empty slices, no durations.
        const before = await store.runStats({ workflow: 'build.sh', since: at(since, -HOUR), until: since }, 15 * 60 * SECOND);
        expect(before.buckets).toHaveLength(4);
        expect(before.buckets.every((bucket) => Object.values(bucket.counts).every((count) => count === 0))).toBe(true);
        expect(before.durations).toBeNull();
        expect((await store.runStats({ project: 'p2', since, until }, HOUR)).durations).toBeNull();
      });
    });

    describe('journal', () => {
      it('reads entries back in position order, call before result', async () => {
        await store.appendJournal(entry('r1', 1, 'result', { exit: 0 }));
        await store.appendJournal(entry('r1', 1, 'call', { argv: ['a'] }));
        await store.appendJournal(entry('r1', 0, 'call', { nested: { deep: [1, 2] } }));
        await store.appendJournal(entry('r2', 0, 'call'));

        const journal = await store.readJournal('r1');
        expect(journal.map((e) => [e.position, e.kind])).toEqual([
          [0, 'call'],
          [1, 'call'],
          [1, 'result'],
        ]);
        expect(journal[0]).toEqual(entry('r1', 0, 'call', { nested: { deep: [1, 2] } }));
        expect(await store.readJournal('nope')).toEqual([]);
      });

      it('keeps the first write of a position and kind; a second one is harmless and answers the first', async () => {
        const first = await store.appendJournal(entry('r1', 0, 'call', { v: 1 }));
        expect(first).toEqual(entry('r1', 0, 'call', { v: 1 }));
        const second = await store.appendJournal({ ...entry('r1', 0, 'call', { v: 2 }), name: 'other' });
        expect(second).toEqual(first);
        expect(await store.readJournal('r1')).toEqual([first]);
      });

      it('writes several entries in one statement, the first write of each kept', async () => {
        const kept = await store.appendJournal(entry('r1', 0, 'call', { v: 1 }));
        const written = await store.appendJournalEntries([entry('r1', 0, 'call', { v: 2 }), entry('r1', 0, 'result', { exit: 0 })]);
        expect(written).toEqual([kept, entry('r1', 0, 'result', { exit: 0 })]);
        expect(await store.readJournal('r1')).toEqual(written);
        expect(await store.appendJournalEntries([])).toEqual([]);
      });

      it("answers each of many concurrent writers its own entries, though they share statements; a bad entry fails only its writer's", async () => {
        await store.createRun(newRun('busy'));
        await store.startPass('busy');
        const kept = await store.appendJournal(entry('r7', 0, 'call', { first: true }));
        const bad = { ...entry('bad', 0, 'call'), kind: 'neither' as JournalEntry['kind'] };
        const writes = Array.from({ length: 20 }, (_, i) => store.appendJournalEntries([entry(`r${i}`, 0, 'call', { i }), entry(`r${i}`, 0, 'result', { exit: i })]));
        const failed = store.appendJournalEntries([bad]).then(() => 'written', (error: Error) => error.message);
        const single = store.appendJournal(entry('busy', 0, 'call', { single: true }));
        const answers = await Promise.all(writes);
        expect(await failed).toMatch(/check constraint/);
        answers.forEach((written, i) => {
          const call = i === 7 ? kept : entry(`r${i}`, 0, 'call', { i });
          expect(written).toEqual([call, entry(`r${i}`, 0, 'result', { exit: i })]);
        });
        expect(await single).toEqual(entry('busy', 0, 'call', { single: true }));
        expect(await store.readJournal('r12')).toEqual(answers[12]);
        expect(await store.readJournal('bad')).toEqual([]);
        // Each row of a shared statement names its own run's pass.
        expect((await store.readJournalTimes('busy')).map((t) => t.pass)).toEqual([1]);
        expect((await store.readJournalTimes('r3')).map((t) => t.pass)).toEqual([null, null]);
      });

      it("copies a rerun's prefix: the entries before a position, as they were, and the rerun lists under its source", async () => {
        const data = { stdoutBase64: Buffer.from([0xff, 0xfe]).toString('base64'), text: 'é\ud83d\ude00', n: 1.5, deep: [{ b: 2, a: 1 }] };
        await store.createRun(newRun('old'));
        await store.appendJournal(entry('old', 0, 'call', { argv: ['a'] }));
        await store.appendJournal(entry('old', 0, 'result', data));
        await store.appendJournal(entry('old', 1, 'call'));
        await store.appendJournal(entry('old', 1, 'result', { exit: 0 }));
        const { run } = await store.createRun(newRun('new', { rerunOf: { runId: 'old', fromStep: 'two' } }));
        expect(run.rerunOf).toEqual({ runId: 'old', fromStep: 'two' });
        expect(await store.copyJournal('old', 'new', 1)).toBe(2);
        expect(await store.readJournal('new')).toEqual([entry('new', 0, 'call', { argv: ['a'] }), entry('new', 0, 'result', data)]);
        expect(await store.readJournal('old')).toHaveLength(4);
        expect(await store.listReruns('old')).toEqual(['new']);
        expect(await store.listReruns('new')).toEqual([]);
        expect((await store.getRun('old'))?.rerunOf).toBeNull();
      });
    });

    describe('signals', () => {
      it('queues signals first in, first out, per name and per run', async () => {
        await store.sendSignal('r1', 'go', 'a1');
        await store.sendSignal('r1', 'stop', 'b1');
        await store.sendSignal('r2', 'go', 'other-run');
        await store.sendSignal('r1', 'go', 'a2');

        expect(await store.takeSignal('r1', 'go')).toBe('a1');
        expect(await store.takeSignal('r1', 'go')).toBe('a2');
        expect(await store.takeSignal('r1', 'go')).toBeNull();
        expect(await store.takeSignal('r1', 'stop')).toBe('b1');
        expect(await store.takeSignal('r2', 'go')).toBe('other-run');
        expect(await store.takeSignal('r2', 'go')).toBeNull();
      });
    });

    describe('events', () => {
      const emit = (
        id: string,
        extra: { type?: string; subject?: string | null; project?: string; payload?: unknown } = {},
      ) => store.emitEvent({ id, project: 'p1', type: 'paid', subject: null, payload: null, ...extra });

      it('numbers events in order and answers the last number', async () => {
        expect(await store.lastEventSeq()).toBe(0);
        const a = await emit('a', { payload: { amount: 3 } });
        const b = await emit('b');
        expect(a).toMatchObject({ id: 'a', project: 'p1', type: 'paid', subject: null, payload: { amount: 3 } });
        expect(a.emittedAt).toBeInstanceOf(Date);
        expect(b.seq).toBeGreaterThan(a.seq);
        expect(await store.lastEventSeq()).toBe(b.seq);
      });

      it('lists the events of a type newest first, a page before a seq at a time', async () => {
        const [a, , c, d] = [await emit('a'), await emit('b', { type: 'refunded' }), await emit('c', { subject: 's' }), await emit('d')];
        await emit('e', { project: 'p2' });
        expect((await store.listEvents('p1', 'paid', { beforeSeq: null, limit: 2 })).map((event) => event.id)).toEqual(['d', 'c']);
        expect(await store.listEvents('p1', 'paid', { beforeSeq: c.seq, limit: 2 })).toEqual([a]);
        expect((await store.listEvents('p1', 'paid', { beforeSeq: d.seq, limit: 1 }))[0]).toEqual(c);
      });

      it('gets an event by id', async () => {
        const event = await emit('e', { subject: 'order-1', payload: { amount: 3 } });
        expect(await store.getEvent('p1', 'e')).toEqual(event);
        expect(await store.getEvent('p1', 'nope')).toBeNull();
        expect(await store.getEvent('p2', 'e')).toBeNull();
      });

      it('keeps ids per project: the same id in another project is another event, and does not answer the first', async () => {
        const mine = await emit('e', { payload: 'mine' });
        const theirs = await emit('e', { project: 'p2', payload: 'theirs' });
        expect(theirs).toMatchObject({ id: 'e', project: 'p2', payload: 'theirs' });
        expect(theirs.seq).not.toBe(mine.seq);
        expect(await store.getEvent('p1', 'e')).toEqual(mine);
        expect(await store.getEvent('p2', 'e')).toEqual(theirs);
      });

      it('emits once per id: a second emit answers the first event', async () => {
        const first = await emit('e', { payload: 1 });
        const again = await emit('e', { payload: 2, type: 'other' });
        expect(again).toEqual(first);
        expect(await store.lastEventSeq()).toBe(first.seq);
        expect(await store.findEvent('p1', 'other', 0, null)).toBeNull();
      });

      it('finds the first event of a type in the project after a seq', async () => {
        await emit('other-type', { type: 'refunded' });
        await emit('other-project', { project: 'p2' });
        const a = await emit('a');
        const b = await emit('b');

        expect(await store.findEvent('p1', 'paid', 0, null)).toEqual(a);
        expect(await store.findEvent('p1', 'paid', a.seq, null)).toEqual(b);
        expect(await store.findEvent('p1', 'paid', b.seq, null)).toBeNull();
        expect((await store.findEvent('p2', 'paid', 0, null))!.id).toBe('other-project');
      });

      it('matches subjects: the same one, or an event without one; a null subject matches any', async () => {
        const other = await emit('other', { subject: 'order-2' });
        const same = await emit('same', { subject: 'order-1' });
        const none = await emit('none', { subject: null });
        const empty = await emit('empty', { subject: '' });

        expect((await store.findEvent('p1', 'paid', 0, 'order-1'))!.id).toBe(same.id);
        expect((await store.findEvent('p1', 'paid', same.seq, 'order-1'))!.id).toBe(none.id);
        expect((await store.findEvent('p1', 'paid', none.seq, 'order-1'))!.id).toBe(empty.id);
        expect(await store.findEvent('p1', 'paid', empty.seq, 'order-1')).toBeNull();
        expect((await store.findEvent('p1', 'paid', 0, 'order-3'))!.id).toBe(none.id);
        expect((await store.findEvent('p1', 'paid', 0, null))!.id).toBe(other.id);
      });
    });

    describe('cells', () => {
      it('sets a value, growing its version', async () => {
        expect(await store.getCell('p1', 's', 'k')).toBeNull();
        expect(await store.setCell('p1', 's', 'k', 'one')).toEqual({ key: 'k', value: 'one', version: 1 });
        expect(await store.setCell('p1', 's', 'k', 'two')).toEqual({ key: 'k', value: 'two', version: 2 });
        expect(await store.getCell('p1', 's', 'k')).toEqual({ key: 'k', value: 'two', version: 2 });
      });

      it('adds a key once: the first claim wins', async () => {
        expect(await store.addCell('p1', 's', 'k', 'first')).toBe(true);
        expect(await store.addCell('p1', 's', 'k', 'second')).toBe(false);
        expect(await store.getCell('p1', 's', 'k')).toEqual({ key: 'k', value: 'first', version: 1 });
      });

      it('increments from absent and from an existing number', async () => {
        expect(await store.incrCell('p1', 's', 'n', 5)).toEqual({ key: 'n', value: '5', version: 1 });
        expect(await store.incrCell('p1', 's', 'n', -7)).toEqual({ key: 'n', value: '-2', version: 2 });
        await store.setCell('p1', 's', 'm', '40');
        expect(await store.incrCell('p1', 's', 'm', 2)).toMatchObject({ value: '42', version: 2 });
      });

      it('leaves a cell that holds no whole number as it is, and says so with null; counts past 64 bits', async () => {
        await store.setCell('p1', 's', 'word', 'abc');
        expect(await store.incrCell('p1', 's', 'word', 1)).toBeNull();
        expect(await store.getCell('p1', 's', 'word')).toEqual({ key: 'word', value: 'abc', version: 1 });
        await store.setCell('p1', 's', 'big', '9223372036854775807');
        expect(await store.incrCell('p1', 's', 'big', 1)).toMatchObject({ value: '9223372036854775808' });
      });

      it('compares and sets; an expected null means the cell is absent', async () => {
        expect(await store.casCell('p1', 's', 'k', null, 'a')).toBe(true);
        expect(await store.casCell('p1', 's', 'k', null, 'b')).toBe(false);
        expect(await store.casCell('p1', 's', 'k', 'wrong', 'c')).toBe(false);
        expect(await store.getCell('p1', 's', 'k')).toEqual({ key: 'k', value: 'a', version: 1 });
        expect(await store.casCell('p1', 's', 'k', 'a', 'd')).toBe(true);
        expect(await store.getCell('p1', 's', 'k')).toEqual({ key: 'k', value: 'd', version: 2 });
        expect(await store.casCell('p1', 's', 'absent', 'a', 'x')).toBe(false);
        expect(await store.getCell('p1', 's', 'absent')).toBeNull();
      });

      it('deletes a cell once', async () => {
        await store.setCell('p1', 's', 'k', 'v');
        expect(await store.deleteCell('p1', 's', 'k')).toBe(true);
        expect(await store.deleteCell('p1', 's', 'k')).toBe(false);
        expect(await store.getCell('p1', 's', 'k')).toBeNull();
      });

      it('lists cells by key, optionally under a literal prefix', async () => {
        for (const key of ['b/1', 'a/2', 'a/1', 'ab']) await store.setCell('p1', 's', key, key.toUpperCase());
        expect((await store.listCells('p1', 's')).map((c) => c.key)).toEqual(['a/1', 'a/2', 'ab', 'b/1']);
        expect(await store.listCells('p1', 's', 'a/')).toEqual([
          { key: 'a/1', value: 'A/1', version: 1 },
          { key: 'a/2', value: 'A/2', version: 1 },
        ]);
        expect(await store.listCells('p1', 's', '_')).toEqual([]);
        expect(await store.listCells('p1', 's', '%')).toEqual([]);
      });

      it('keeps scopes and projects apart', async () => {
        await store.setCell('p1', 's1', 'k', 'p1-s1');
        await store.setCell('p1', 's2', 'k', 'p1-s2');
        await store.setCell('p2', 's1', 'k', 'p2-s1');
        expect(await store.addCell('p1', 's3', 'k', 'p1-s3')).toBe(true);
        expect(await store.incrCell('p2', 's2', 'k', 1)).toMatchObject({ value: '1', version: 1 });

        expect((await store.getCell('p1', 's1', 'k'))!.value).toBe('p1-s1');
        expect((await store.getCell('p1', 's2', 'k'))!.value).toBe('p1-s2');
        expect((await store.getCell('p2', 's1', 'k'))!.value).toBe('p2-s1');
        expect((await store.listCells('p1', 's1')).map((c) => c.value)).toEqual(['p1-s1']);

        expect(await store.casCell('p2', 's1', 'k', 'p1-s1', 'x')).toBe(false);
        expect(await store.deleteCell('p1', 's1', 'k')).toBe(true);
        expect((await store.getCell('p1', 's2', 'k'))!.value).toBe('p1-s2');
        expect((await store.getCell('p2', 's1', 'k'))!.value).toBe('p2-s1');
      });
    });

    describe('leases', () => {
      it('is held by the first arrival; acquiring again changes nothing', async () => {
        expect(await store.acquireLease('p1', 'g', 'a')).toBe('a');
        expect(await store.acquireLease('p1', 'g', 'b')).toBe('a');
        expect(await store.acquireLease('p1', 'g', 'c')).toBe('a');
        expect(await store.acquireLease('p1', 'g', 'a')).toBe('a');
        expect(await store.acquireLease('p1', 'g', 'b')).toBe('a');

        // b re-acquiring kept its place ahead of c
        expect(await store.releaseLease('p1', 'g', 'a')).toBe('b');
      });

      it('passes to the next in arrival order on release', async () => {
        for (const run of ['a', 'b', 'c']) await store.acquireLease('p1', 'g', run);
        expect(await store.releaseLease('p1', 'g', 'a')).toBe('b');
        expect(await store.releaseLease('p1', 'g', 'b')).toBe('c');
        expect(await store.releaseLease('p1', 'g', 'c')).toBeNull();
        expect(await store.acquireLease('p1', 'g', 'b')).toBe('b');
      });

      it('lets a waiting run leave the queue without taking the lease from its holder', async () => {
        for (const run of ['a', 'b', 'c']) await store.acquireLease('p1', 'g', run);
        expect(await store.releaseLease('p1', 'g', 'b')).toBe('a');
        expect(await store.releaseLease('p1', 'g', 'a')).toBe('c');
      });

      it('keeps groups and projects apart', async () => {
        expect(await store.acquireLease('p1', 'g1', 'a')).toBe('a');
        expect(await store.acquireLease('p1', 'g2', 'b')).toBe('b');
        expect(await store.acquireLease('p2', 'g1', 'c')).toBe('c');
        expect(await store.releaseLease('p1', 'g2', 'b')).toBeNull();
        expect(await store.acquireLease('p1', 'g1', 'd')).toBe('a');
      });

      it('a run that finishes leaves every queue it is in, answering the runs that became holders', async () => {
        for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await store.createRun(newRun(id));
        const finish = async (id: string) => (await store.finishRun(id, { status: 'succeeded', finishedAt: new Date() }))?.holders;
        await store.acquireLease('p1', 'g1', 'a');
        await store.acquireLease('p1', 'g2', 'a');
        await store.acquireLease('p2', 'g1', 'a');
        await store.acquireLease('p1', 'g1', 'b');
        await store.acquireLease('p1', 'g2', 'c');
        await store.acquireLease('p1', 'g3', 'd');
        await store.acquireLease('p1', 'g3', 'e');

        expect((await finish('a'))?.sort()).toEqual(['b', 'c']);
        expect((await store.getRun('a'))?.status).toBe('succeeded');
        expect(await store.acquireLease('p1', 'g1', 'x')).toBe('b');
        expect(await store.acquireLease('p2', 'g1', 'x')).toBe('x');
        // e only waited: leaving the queue makes nobody a new holder
        expect(await finish('e')).toEqual([]);
        expect(await finish('f')).toEqual([]);
        expect(await finish('nope')).toBeUndefined();
        expect(await store.acquireLease('p1', 'g3', 'y')).toBe('d');
      });

      it('changes nothing of a run cancelled meanwhile: neither its status nor its leases (its cancel settled them)', async () => {
        await store.createRun(newRun('a'));
        await store.acquireLease('p1', 'g1', 'a');
        await store.acquireLease('p1', 'g1', 'b');
        await store.updateRun('a', { status: 'cancelled' });
        expect(await store.finishRun('a', { status: 'succeeded', finishedAt: new Date() })).toBeNull();
        expect((await store.getRun('a'))?.status).toBe('cancelled');
        expect(await store.acquireLease('p1', 'g1', 'x')).toBe('a');
      });
    });

    describe('activities', () => {
      const later = (): Date => at(new Date(), 5 * SECOND);

      it('creates a queued activity and lists a run’s activities in creation order', async () => {
        await store.createActivity(
          activity('build', {
            cwd: '/src',
            requires: ['docker'],
            retryOnExit: [75, 1],
            maxAttempts: 5,
            backoffMs: 250,
          }),
        );
        await sleep(5);
        await store.createActivity(activity('test'));
        await store.createActivity(activity('elsewhere', { runId: 'r2' }));
        await store.createActivity(activity('build', { name: 'duplicate' }));

        const build = await store.getActivity('build');
        expect(build).toMatchObject({
          id: 'build',
          runId: 'r1',
          name: 'build',
          argv: ['make', 'build'],
          cwd: '/src',
          requires: ['docker'],
          maxAttempts: 5,
          backoffMs: 250,
          retryOnExit: [75, 1],
          attempt: 0,
          status: 'queued',
          result: null,
        });
        expect(build!.nextAttemptAt).toBeInstanceOf(Date);
        expect((await store.listActivities('r1')).map((a) => a.id)).toEqual(['build', 'test']);
        expect(await store.getActivity('nope')).toBeNull();
      });

      it('claims only activities whose requirements are among the capabilities', async () => {
        await store.createActivity(activity('gpu', { requires: ['gpu'] }));
        await store.createActivity(activity('gpu-docker', { requires: ['gpu', 'docker'] }));
        await store.createActivity(activity('plain'));

        const plain = await store.claimActivity([], later());
        expect(plain).toMatchObject({ id: 'plain', status: 'running', attempt: 1 });
        expect(await store.claimActivity(['docker'], later())).toBeNull();
        expect((await store.claimActivity(['gpu', 'arm'], later()))!.id).toBe('gpu');
        expect(await store.claimActivity(['gpu', 'arm'], later())).toBeNull();
        expect((await store.claimActivity(['docker', 'gpu', 'arm'], later()))!.id).toBe('gpu-docker');
        expect(await store.claimActivity(['docker', 'gpu', 'arm'], later())).toBeNull();
        expect((await store.getActivity('gpu'))!.status).toBe('running');
      });

      it('claims and requeues only the activities of runs in the given shards', async () => {
        const runIds = Array.from({ length: 12 }, (_, i) => `k8s:p1:run-${i}`);
        for (const runId of runIds) await store.createActivity(activity(`of-${runId}`, { runId }));
        const inShard = (shard: number) => runIds.filter((runId) => shardOfRun(runId, 2) === shard).map((runId) => `of-${runId}`).sort();
        expect(inShard(0).length * inShard(1).length).toBeGreaterThan(0);
        const claimAll = async (owned: number[]): Promise<string[]> => {
          const claimed: string[] = [];
          for (let next = await store.claimActivity([], later(), { count: 2, owned }); next; next = await store.claimActivity([], later(), { count: 2, owned })) claimed.push(next.id);
          return claimed.sort();
        };
        expect(await claimAll([1])).toEqual(inShard(1));
        expect(await claimAll([0])).toEqual(inShard(0));
        expect(await store.requeueRunningActivities({ count: 2, owned: [0] })).toBe(inShard(0).length);
        expect(await claimAll([0, 1])).toEqual(inShard(0));
        expect(await store.requeueRunningActivities()).toBe(runIds.length);
      });

      it('claims an activity only once its next attempt is due, earliest first', async () => {
        await store.createActivity(activity('a'));
        const created = (await store.getActivity('a'))!.nextAttemptAt;
        expect(await store.claimActivity([], at(created, -SECOND))).toBeNull();
        // the store keeps microseconds, a Date only milliseconds: one more makes it due for sure
        expect((await store.claimActivity([], at(created, 1)))!.id).toBe('a');

        await store.createActivity(activity('b'));
        await store.createActivity(activity('c'));
        expect((await store.claimActivity([], later()))!.id).toBe('b');
        const retryAt = at(created, 60 * SECOND);
        await store.finishActivityAttempt('b', {
          result: { stdout: '', exitCode: 1, attempts: 1 },
          final: false,
          retryAt,
        });
        expect((await store.claimActivity([], later()))!.id).toBe('c');
        expect(await store.claimActivity([], at(retryAt, -1))).toBeNull();
        expect(await store.claimActivity([], retryAt)).toMatchObject({ id: 'b', attempt: 2 });
      });

      it('finishes a given attempt only while it is the one running: a second report, or one of a superseded attempt, changes nothing', async () => {
        await store.createActivity(activity('once'));
        await store.claimActivity([], later());
        const result = { stdout: 'first\n', exitCode: 0, attempts: 1 };
        expect(await store.finishActivityAttempt('once', { result, final: true, attempt: 2 })).toBe(false);
        const both = await Promise.all([1, 1].map(() => store.finishActivityAttempt('once', { result, final: true, attempt: 1 })));
        expect(both.sort()).toEqual([false, true]);
        expect(await store.finishActivityAttempt('once', { result: { stdout: 'again\n', exitCode: 0, attempts: 1 }, final: true, attempt: 1 })).toBe(false);
        expect(await store.getActivity('once')).toMatchObject({ status: 'succeeded', result });

        // Attempt 1 queued again (its pod lost), attempt 2 claimed: attempt 1's late report lands nowhere.
        await store.createActivity(activity('lost'));
        await store.claimActivity([], later());
        expect(await store.finishActivityAttempt('lost', { result: { stdout: '', exitCode: 1, attempts: 1 }, final: false, retryAt: new Date(0), attempt: 1 })).toBe(true);
        await store.claimActivity([], later());
        expect(await store.finishActivityAttempt('lost', { result: { stdout: 'late\n', exitCode: 0, attempts: 1 }, final: true, attempt: 1 })).toBe(false);
        expect(await store.getActivity('lost')).toMatchObject({ status: 'running', attempt: 2 });
      });

      it('finishes an attempt for good, or queues it again at retryAt', async () => {
        await store.createActivity(activity('ok'));
        await store.createActivity(activity('bad'));
        await store.createActivity(activity('flaky'));
        for (let i = 0; i < 3; i++) await store.claimActivity([], later());

        const retryAt = new Date('2030-01-01T00:00:00.000Z');
        await store.finishActivityAttempt('ok', {
          result: { stdout: 'done\n', exitCode: 0, attempts: 1 },
          final: true,
        });
        await store.finishActivityAttempt('bad', { result: { stdout: '', exitCode: 2, attempts: 1 }, final: true });
        await store.finishActivityAttempt('flaky', {
          result: { stdout: 'x', exitCode: 75, attempts: 1 },
          final: false,
          retryAt,
        });

        expect(await store.getActivity('ok')).toMatchObject({
          status: 'succeeded',
          attempt: 1,
          result: { stdout: 'done\n', exitCode: 0, attempts: 1 },
        });
        expect(await store.getActivity('bad')).toMatchObject({ status: 'failed', result: { exitCode: 2 } });
        expect(await store.getActivity('flaky')).toMatchObject({
          status: 'queued',
          attempt: 1,
          nextAttemptAt: retryAt,
        });
        expect(await store.nextActivityAt()).toEqual(retryAt);
        expect(await store.claimActivity([], later())).toBeNull();
        expect(await store.claimActivity([], retryAt)).toMatchObject({ id: 'flaky', attempt: 2 });
        expect(await store.nextActivityAt()).toBeNull();
      });

      it('puts activities left running back in the queue', async () => {
        await store.createActivity(activity('a'));
        await store.createActivity(activity('b'));
        await store.createActivity(activity('done'));
        await store.createActivity(activity('queued', { requires: ['never'] }));
        for (let i = 0; i < 3; i++) await store.claimActivity([], later());
        await store.finishActivityAttempt('done', { result: { stdout: '', exitCode: 0, attempts: 1 }, final: true });

        expect(await store.requeueRunningActivities()).toBe(2);
        expect((await store.getActivity('a'))!.status).toBe('queued');
        expect((await store.getActivity('done'))!.status).toBe('succeeded');
        expect(await store.claimActivity([], later())).toMatchObject({ status: 'running', attempt: 2 });
        expect(await store.requeueRunningActivities()).toBe(1);
      });

      it('answers when the next queued activity is due', async () => {
        expect(await store.nextActivityAt()).toBeNull();
        await store.createActivity(activity('a'));
        await store.createActivity(activity('b'));
        const b = (await store.getActivity('b'))!;
        expect((await store.claimActivity([], later()))!.id).toBe('a');
        expect(await store.nextActivityAt()).toEqual(b.nextAttemptAt);

        await store.claimActivity([], later());
        expect(await store.nextActivityAt()).toBeNull();
        const retryAt = at(b.nextAttemptAt, 30 * SECOND);
        const failed = { stdout: '', exitCode: 1, attempts: 1 };
        await store.finishActivityAttempt('a', { result: failed, final: false, retryAt: at(retryAt, SECOND) });
        await store.finishActivityAttempt('b', { result: failed, final: false, retryAt });
        expect(await store.nextActivityAt()).toEqual(retryAt);
      });
    });

    describe('gate answers', () => {
      it('given answers at once, then exactly one is final, and every answer is kept in order (issue 28, bug 5)', async () => {
        const answers = await Promise.all(
          ['alice', 'bob', 'carol'].map((by, i) => store.answerGate('gate-1', { decision: i % 2 ? 'reject' : 'approve', by, via: 'page', values: { n: i } })),
        );
        expect(answers.filter((each) => each.won)).toHaveLength(1);
        const first = answers.find((each) => each.won)?.first;
        for (const each of answers) expect(each.first).toEqual(first);
        const kept = await store.gateAnswers('gate-1');
        expect(kept.map((each) => each.by).sort()).toEqual(['alice', 'bob', 'carol']);
        expect(kept.filter((each) => each.final)).toEqual([first]);
        expect(await store.gateAnswers('gate-2')).toEqual([]);
      });

      it('given a gate needing two approvals and three arriving at once, then exactly one is final, the second, with two approvals counted and the third kept late (issue 33, item 11)', async () => {
        const claims = await Promise.all(
          ['alice', 'bob', 'carol'].map((by) => store.answerGate('gate-3', { decision: 'approve', by, via: 'page', values: { who: by } }, 2)),
        );
        expect(claims.filter((each) => each.won)).toHaveLength(1);
        const kept = await store.gateAnswers('gate-3');
        expect(kept).toHaveLength(3);
        // In the order they were kept: one counted, the final second, the last one late.
        expect(kept.map((each) => each.final)).toEqual([false, true, false]);
        const won = claims.find((each) => each.won);
        expect(won?.approvals.map((each) => each.by)).toEqual([kept[0]?.by, kept[1]?.by]);
        expect(won?.first).toEqual(kept[1]);
        const late = claims.find((each) => !each.won && each.first !== null);
        expect(late?.first).toEqual(kept[1]);
        expect(claims.filter((each) => !each.won && each.first === null)).toHaveLength(1);
      });

      it('given a gate needing two approvals, then a person’s second answer is refused and not kept, and the first rejection decides it', async () => {
        const first = await store.answerGate('gate-4', { decision: 'approve', by: 'alice', via: 'cli', values: {} }, 2);
        expect(first).toMatchObject({ won: false, first: null, duplicate: null });
        expect(first.approvals.map((each) => each.by)).toEqual(['alice']);
        const again = await store.answerGate('gate-4', { decision: 'approve', by: 'alice', via: 'page', values: {} }, 2);
        expect(again).toMatchObject({ won: false, first: null, duplicate: { by: 'alice', via: 'cli', decision: 'approve' } });
        expect(await store.gateAnswers('gate-4')).toHaveLength(1);
        const rejected = await store.answerGate('gate-4', { decision: 'reject', by: 'bob', via: 'slack', values: {} }, 2);
        expect(rejected).toMatchObject({ won: true, first: { decision: 'reject', by: 'bob', final: true } });
        expect((await store.gateAnswers('gate-4')).map((each) => [each.by, each.final])).toEqual([['alice', false], ['bob', true]]);
      });
    });

    describe('logs', () => {
      it('keeps bytes that are not plain text exactly, beside a text with U+FFFD (issue 28, bug 3)', async () => {
        await store.appendLog('bytes', 1, Buffer.from([0x78, 0x00, 0x79, 0xe9, 0x0a]));
        const [line] = await store.readLogs('bytes');
        expect(line?.text).toBe('x\ufffdy\ufffd\n');
        expect(Buffer.from(line?.base64 ?? '', 'base64').toString('hex')).toBe('780079e90a');
      });

      it('appends lines and reads them after a seq, per run', async () => {
        await store.appendLog('r1', 1, 'one');
        await store.appendLog('r2', 1, 'other run');
        await store.appendLog('r1', 1, 'two');
        await store.appendLog('r1', 2, 'three');

        const lines = await store.readLogs('r1');
        expect(lines.map((l) => [l.pass, l.text])).toEqual([
          [1, 'one'],
          [1, 'two'],
          [2, 'three'],
        ]);
        expect(lines[1]!.seq).toBeGreaterThan(lines[0]!.seq);
        expect(lines[2]!.seq).toBeGreaterThan(lines[1]!.seq);
        expect((await store.readLogs('r1', lines[0]!.seq)).map((l) => l.text)).toEqual(['two', 'three']);
        expect(await store.readLogs('r1', lines[2]!.seq)).toEqual([]);
        expect(await store.readLogs('nope')).toEqual([]);
      });
    });

    describe('handlers', () => {
      const handler = (name: string, eventType: string, extra: { project?: string; script?: string } = {}) => ({
        project: 'p1',
        name,
        eventType,
        workflow: `wf-${name}`,
        interpreter: 'bash',
        script: 'echo handled',
        cwd: null,
        runner: null,
        ...extra,
      });

      it('puts, lists by project and event type, replaces and deletes handlers', async () => {
        await store.putHandler(handler('b', 'paid'));
        await store.putHandler(handler('a', 'paid', { script: 'old' }));
        await store.putHandler(handler('c', 'refunded'));
        await store.putHandler(handler('x', 'paid', { project: 'p2' }));
        await store.putHandler({ ...handler('a', 'paid', { script: 'new' }), cwd: '/w', runner: { image: 'runner:2' } });

        expect((await store.listHandlers('p1')).map((h) => h.name)).toEqual(['a', 'b', 'c']);
        expect(await store.listHandlers('p1', 'paid')).toEqual([
          { ...handler('a', 'paid', { script: 'new' }), cwd: '/w', runner: { image: 'runner:2' } },
          handler('b', 'paid'),
        ]);
        expect(await store.deleteHandler('p1', 'a')).toBe(true);
        expect(await store.deleteHandler('p1', 'a')).toBe(false);
        expect((await store.listHandlers('p1', 'paid')).map((h) => h.name)).toEqual(['b']);
        expect((await store.listHandlers('p2')).map((h) => h.name)).toEqual(['x']);
      });
    });

    describe('schedules', () => {
      const t0 = new Date('2030-01-01T00:00:00.000Z');
      const schedule = (name: string, nextAt: Date, extra: Partial<ScheduleRecord> = {}) => ({
        project: 'p1',
        name,
        everyMs: 60_000,
        cron: null,
        workflow: `wf-${name}`,
        interpreter: 'bash',
        script: 'echo tick',
        cwd: null,
        nextAt,
        runner: null,
        input: null,
        overlap: 'skip' as const,
        ...extra,
      });

      it('puts, lists and deletes schedules; putting again keeps what ran', async () => {
        await store.putSchedule(schedule('b', t0, { project: 'p2' }));
        await store.putSchedule(schedule('a', t0, { everyMs: null, cron: '*/5 * * * *' }));
        expect(await store.listSchedules('p1')).toEqual([
          { ...schedule('a', t0, { everyMs: null, cron: '*/5 * * * *' }), lastRunId: null, skipped: 0, suspendedAt: null },
        ]);
        expect((await store.listSchedules()).map((s) => `${s.project}/${s.name}`)).toEqual(['p1/a', 'p2/b']);

        expect(await store.claimScheduleTick('p1', 'a', t0, at(t0, 60_000))).toBe(true);
        await store.noteScheduleTick('p1', 'a', { runId: 'r1' });
        await store.putSchedule(schedule('a', at(t0, 120_000), { script: 'echo changed' }));
        expect(await store.listSchedules('p1')).toEqual([
          { ...schedule('a', at(t0, 120_000), { script: 'echo changed' }), lastRunId: 'r1', skipped: 0, suspendedAt: null },
        ]);

        // A schedule's own input, overlap and runner settings are kept as given.
        const options = { input: { region: 'eu' }, overlap: 'allow' as const, runner: { image: 'runner:2', env: [{ name: 'A', value: '1' }] } };
        await store.putSchedule(schedule('a', at(t0, 120_000), options));
        expect((await store.listSchedules('p1'))[0]).toMatchObject(options);

        expect(await store.deleteSchedule('p1', 'a')).toBe(true);
        expect(await store.deleteSchedule('p1', 'a')).toBe(false);
        expect(await store.listSchedules('p1')).toEqual([]);
      });

      it('with keepNextAt, keeps the next tick of a schedule put again unless its cadence changed', async () => {
        await store.putSchedule(schedule('a', t0), { keepNextAt: true });
        expect((await store.listSchedules('p1'))[0]?.nextAt).toEqual(t0);
        await store.putSchedule(schedule('a', at(t0, 60_000), { script: 'echo changed', input: { x: 1 } }), { keepNextAt: true });
        expect((await store.listSchedules('p1'))[0]).toMatchObject({ nextAt: t0, script: 'echo changed', input: { x: 1 } });
        await store.putSchedule(schedule('a', at(t0, 120_000), { everyMs: 120_000 }), { keepNextAt: true });
        expect((await store.listSchedules('p1'))[0]).toMatchObject({ nextAt: at(t0, 120_000), everyMs: 120_000 });
        await store.putSchedule(schedule('a', at(t0, 300_000), { everyMs: null, cron: '*/5 * * * *' }), { keepNextAt: true });
        expect((await store.listSchedules('p1'))[0]?.nextAt).toEqual(at(t0, 300_000));
      });

      it('suspends a schedule: it is never due and its tick cannot be claimed; resumed, it ticks from the time given', async () => {
        await store.putSchedule(schedule('s', t0));
        const suspended = await store.suspendSchedule('p1', 's', at(t0, -SECOND));
        expect(suspended).toMatchObject({ name: 's', suspendedAt: at(t0, -SECOND), nextAt: t0 });
        // A second suspend keeps the first time; putting it again (a new script) keeps it suspended.
        expect((await store.suspendSchedule('p1', 's', t0))?.suspendedAt).toEqual(at(t0, -SECOND));
        await store.putSchedule(schedule('s', t0, { script: 'echo changed' }));
        expect(await store.dueSchedules(at(t0, 600_000))).toEqual([]);
        expect(await store.claimScheduleTick('p1', 's', t0, at(t0, 60_000))).toBe(false);
        expect(await store.nextDueAt()).toBeNull();

        expect(await store.resumeSchedule('p1', 's', at(t0, 660_000))).toMatchObject({ suspendedAt: null, nextAt: at(t0, 660_000) });
        expect(await store.nextDueAt()).toEqual(at(t0, 660_000));
        // Resuming one that ticks leaves its tick where it was.
        expect((await store.resumeSchedule('p1', 's', at(t0, 999_000)))?.nextAt).toEqual(at(t0, 660_000));
        expect(await store.suspendSchedule('p1', 'nowhere', t0)).toBeNull();
        expect(await store.resumeSchedule('p1', 'nowhere', t0)).toBeNull();
      });

      it("lists each schedule's last runs, newest first, up to a limit; no other runs", async () => {
        await store.putSchedule(schedule('a', t0));
        await store.putSchedule(schedule('b', t0));
        for (const id of ['a1', 'a2', 'a3']) {
          await store.createRun(newRun(id, { schedule: 'a' }));
          await sleep(5);
        }
        await store.createRun(newRun('b1', { schedule: 'b' }));
        await store.createRun(newRun('by-hand'));
        await store.createRun(newRun('elsewhere', { project: 'p2', schedule: 'a' }));
        const recent = await store.recentScheduleRuns('p1', 2);
        expect([...recent.keys()]).toEqual(['a', 'b']);
        expect(recent.get('a')?.map((run) => [run.id, run.status])).toEqual([['a3', 'pending'], ['a2', 'pending']]);
        expect(recent.get('b')?.map((run) => run.id)).toEqual(['b1']);
        expect(recent.get('b')?.[0]?.createdAt).toBeInstanceOf(Date);
      });

      it('answers due schedules and advances them, noting the run or the skip', async () => {
        await store.putSchedule(schedule('later', at(t0, 60_000)));
        await store.putSchedule(schedule('now', t0));
        await store.putSchedule(schedule('earlier', at(t0, -60_000), { project: 'p2' }));

        expect((await store.dueSchedules(t0)).map((s) => s.name)).toEqual(['earlier', 'now']);

        expect(await store.claimScheduleTick('p1', 'now', t0, at(t0, 60_000))).toBe(true);
        await store.noteScheduleTick('p1', 'now', { runId: 'r1' });
        for (const [due, next] of [[60_000, 120_000], [120_000, 180_000]] as const) {
          expect(await store.claimScheduleTick('p1', 'now', at(t0, due), at(t0, next))).toBe(true);
          await store.noteScheduleTick('p1', 'now', { skipped: true });
        }
        expect((await store.listSchedules('p1')).find((s) => s.name === 'now')).toMatchObject({
          nextAt: at(t0, 180_000),
          lastRunId: 'r1',
          skipped: 2,
        });
        expect((await store.dueSchedules(t0)).map((s) => s.name)).toEqual(['earlier']);
        expect((await store.dueSchedules(at(t0, 180_000))).map((s) => s.name)).toEqual(['earlier', 'later', 'now']);
      });

      it('gives a due tick to one claimer only, however many claim it at once', async () => {
        await store.putSchedule(schedule('tick', t0));
        const claims = await Promise.all([0, 1, 2, 3].map(() => store.claimScheduleTick('p1', 'tick', t0, at(t0, 60_000))));
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(await store.claimScheduleTick('p1', 'tick', t0, at(t0, 120_000))).toBe(false);
        expect((await store.listSchedules('p1'))[0]?.nextAt).toEqual(at(t0, 60_000));
      });
    });

    describe('nextDueAt', () => {
      it('answers the earliest wake time of a waiting or pending run, an activity retry or a schedule tick', async () => {
        const t0 = new Date('2030-01-01T00:00:00.000Z');
        expect(await store.nextDueAt()).toBeNull();
        await store.createRun(newRun('r1', { notBefore: at(t0, 5000) }));
        expect(await store.nextDueAt()).toEqual(at(t0, 5000));
        await store.createRun(newRun('r2'));
        await store.updateRun('r2', { status: 'waiting', wakeAt: at(t0, 3000) });
        expect(await store.nextDueAt()).toEqual(at(t0, 3000));
        await store.createRun(newRun('r3'));
        await store.updateRun('r3', { status: 'succeeded', wakeAt: at(t0, 1000) });
        expect(await store.nextDueAt()).toEqual(at(t0, 3000));
        await store.createActivity(activity('a1'));
        const claimed = await store.claimActivity([], at(t0, 1e12));
        await store.finishActivityAttempt(claimed!.id, {
          result: { stdout: '', exitCode: 75, attempts: 1 },
          final: false,
          retryAt: at(t0, 2000),
        });
        expect(await store.nextDueAt()).toEqual(at(t0, 2000));
      });
    });

    describe('throttles', () => {
      const slot = async (project: string, key: string, now: Date, burst = 1, drop = false) =>
        store.takeThrottleSlot(project, key, now, { intervalMs: 1500, burst, drop });

      it('spaces slots per key by the interval, never before now', async () => {
        const now = new Date('2030-01-01T00:00:00.000Z');
        expect((await slot('p1', 'k', now)).at).toEqual(now);
        expect((await slot('p1', 'k', now)).at).toEqual(at(now, 1500));
        expect((await slot('p1', 'k', at(now, 1000))).at).toEqual(at(now, 3000));
        expect((await slot('p1', 'other', now)).at).toEqual(now);
        expect((await slot('p2', 'k', now)).at).toEqual(now);
        expect((await slot('p1', 'k', at(now, 60_000))).at).toEqual(at(now, 60_000));
      });

      it('lets a burst start together after a quiet spell, then spaces the rest', async () => {
        const now = new Date('2030-01-01T00:00:00.000Z');
        const starts = [];
        for (let i = 0; i < 4; i++) starts.push((await slot('p1', 'b', now, 3)).at);
        expect(starts).toEqual([now, now, now, at(now, 1500)]);
      });

      it('with drop, refuses a late slot without taking it', async () => {
        const now = new Date('2030-01-01T00:00:00.000Z');
        expect(await slot('p1', 'd', now, 1, true)).toEqual({ at: now, admitted: true });
        expect(await slot('p1', 'd', now, 1, true)).toEqual({ at: at(now, 1500), admitted: false });
        expect(await slot('p1', 'd', at(now, 1500), 1, true)).toEqual({ at: at(now, 1500), admitted: true });
      });
    });

    describe('transaction', () => {
      it('commits its writes together and answers what fn answers', async () => {
        const answer = await store.transaction(async (tx) => {
          await tx.createRun(newRun('r1'));
          await tx.appendJournal(entry('r1', 0, 'call'));
          await tx.setCell('p1', 's', 'k', 'v');
          expect((await tx.getRun('r1'))!.id).toBe('r1');
          return 42;
        });
        expect(answer).toBe(42);
        expect(await store.getRun('r1')).not.toBeNull();
        expect(await store.readJournal('r1')).toHaveLength(1);
        expect(await store.getCell('p1', 's', 'k')).not.toBeNull();
      });

      it('rolls everything back when fn throws, nested transactions included', async () => {
        await store.setCell('p1', 's', 'k', 'before');
        const failure = new Error('boom');
        await expect(
          store.transaction(async (tx) => {
            await tx.createRun(newRun('r1'));
            await tx.setCell('p1', 's', 'k', 'during');
            await tx.transaction(async (inner) => {
              await inner.sendSignal('r1', 'go', 'x');
            });
            throw failure;
          }),
        ).rejects.toBe(failure);

        expect(await store.getRun('r1')).toBeNull();
        expect(await store.getCell('p1', 's', 'k')).toEqual({ key: 'k', value: 'before', version: 1 });
        expect(await store.takeSignal('r1', 'go')).toBeNull();
      });
    });
  });
}

describe('PGlite', () => {
  // A PGlite instance takes seconds to start, so the suite shares one, emptied before each test.
  let shared: SqlStore | undefined;
  afterAll(async () => {
    await shared?.close();
  });

  storeContract(
    'PGlite (in memory)',
    async () => {
      if (!shared) return (shared = await openPgliteStore());
      const db = (shared as unknown as { db: SqlClient }).db;
      const tables = await db.query<{ tablename: string }>(
        `select tablename from pg_tables where schemaname = current_schema() and tablename <> 'schema_migrations'`,
      );
      await db.exec(`truncate ${tables.map((t) => `"${t.tablename}"`).join(', ')} restart identity`);
      return shared;
    },
    () => Promise.resolve(),
  );
});

describe('PostgreSQL server', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  storeContract(
    'postgres',
    async () => openPostgresStore(await server!.createDatabase(), { max: 4 }),
    (store) => store.close(),
  );

  // The layout of docs/scaling.md: the journal hash-partitioned by run (hack/partition-journal.sql).
  storeContract(
    'postgres, the journal in 4 hash partitions',
    async () => {
      const url = await server!.createDatabase();
      const store = await openPostgresStore(url, { max: 4 });
      await partitionJournal(url, 4);
      return store;
    },
    (store) => store.close(),
  );
});
