import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pass, type PassHost } from '../../src/engine/pass.js';
import type { Request } from '../../src/engine/protocol.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';

/**
 * The agent is a boundary (issue: every bad input refused at the boundary): a request whose fields
 * are not its verb's is refused with one line naming the field, exit 2, and takes no position.
 */
const host: PassHost = { now: () => new Date('2030-01-01T00:00:00Z'), capabilities: ['shell'], maxResultBytes: 1024 * 1024, env: 'dev', notify: () => undefined };

describe('requests checked before anything is recorded', () => {
  let store: Store;
  let runs = 0;

  beforeAll(async () => {
    store = await openPgliteStore();
  });

  afterAll(async () => {
    await store.close();
  });

  async function freshPass(): Promise<Pass> {
    runs += 1;
    const { run } = await store.createRun({ id: `dev:checks:run-${String(runs).padStart(16, '0')}`, project: 'checks', workflow: 'c.sh', interpreter: 'bash -eu', script: '', input: null });
    return Pass.start(store, run, host);
  }

  it.each([
    ['a step name that is a number', { verb: 'step', name: 123 }, "bad step request: 'name' must be string"],
    ['an empty step name', { verb: 'step', name: '' }, "bad step request: 'name' must not be empty"],
    ['a step name with a newline', { verb: 'step', name: 'a\nb' }, "bad step request: 'name' must not contain control characters"],
    ['a 100 KB step name', { verb: 'step', name: 'x'.repeat(100_000) }, "bad step request: 'name' is longer than 256 characters"],
    ['a step without a name', { verb: 'step' }, "bad step request: 'name' is missing"],
    ['an empty lock group', { verb: 'lock', group: '', command: false }, "bad lock request: 'group' must not be empty"],
    ['an empty output key', { verb: 'output.set', key: '', value: 'v' }, "bad output.set request: 'key' must not be empty"],
    ['an empty event type', { verb: 'event.emit', type: '' }, "bad event.emit request: 'type' must not be empty"],
    ['an empty state key', { verb: 'state.set', key: '', value: 'v' }, "bad state.set request: 'key' must not be empty"],
    ['an empty entity', { verb: 'state.set', key: 'k', value: 'v', entity: '' }, "bad state.set request: 'entity' must not be empty"],
    ['an empty activity name', { verb: 'activity.submit', name: '', argv: ['true'], requires: [], attempts: 1, backoffMs: 1000, retryOnExit: null }, "bad activity.submit request: 'name' must not be empty"],
    ['argv as a string', { verb: 'activity.submit', name: 'a', argv: 'echo', requires: [], attempts: 1, backoffMs: 1000, retryOnExit: null }, "bad activity.submit request: 'argv' must be array"],
    ['incr by a word', { verb: 'state.incr', key: 'k', by: 'abc' }, "bad state.incr request: 'by' must be integer"],
    ['sleep ms as a word', { verb: 'sleep', ms: 'abc' }, "bad sleep request: 'ms' must be integer"],
    // Milliseconds are whole: the store keeps a backoff in an integer column (the socket fuzz test's find).
    // Issue 28, bug 12: JSON 100,000 deep ended in "Maximum call stack size exceeded".
    ['a payload 100,000 deep', { verb: 'event.emit', type: 't', payload: JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown }, 'bad event.emit request: JSON nested more than 64 deep; keep values flatter'],
    ['a lone surrogate', { verb: 'step', name: 'a\ud800' }, 'bad step request: text that is not well-formed Unicode (a lone surrogate); send UTF-8 text'],
    ['a backoff of 1.5 ms', { verb: 'activity.submit', name: 'a', argv: ['true'], requires: [], attempts: 1, backoffMs: 1.5, retryOnExit: null }, "bad activity.submit request: 'backoffMs' must be integer"],
    ['a negative sleep', { verb: 'sleep', ms: -1 }, "bad sleep request: 'ms' must be at least 0"],
    ['a sleep past any date', { verb: 'sleep', ms: 1e300 }, "bad sleep request: 'ms' must be at most 3155760000000"],
    ['a field of another verb', { verb: 'step', name: 'a', inputs: {} }, "bad step request: 'inputs' is not a field of step"],
    ['a request that is not an object', [1, 2], 'a request is one JSON object with a verb'],
  ])('given %s, then it is a usage error naming the field, exit 2, and the next call is call 1', async (_, request, message) => {
    const pass = await freshPass();
    const answer = await pass.handle(request as unknown as Request);
    expect(answer).toMatchObject({ status: 'error', kind: 'usage', exitCode: 2 });
    expect((answer as { message: string }).message).toContain(message);
    expect(await pass.handle({ verb: 'step', name: 'next' })).toMatchObject({ status: 'execute', position: 0 });
  });

  it('given a done with the wrong types, then it is refused and the step can still be completed', async () => {
    const pass = await freshPass();
    expect(await pass.handle({ verb: 'step', name: 'a' })).toMatchObject({ status: 'execute', position: 0 });
    expect(await pass.handle({ verb: 'done', position: 0, stdout: 5, exitCode: 'x' } as unknown as Request)).toMatchObject({ status: 'error', kind: 'usage' });
    expect(await pass.handle({ verb: 'done', position: 0, stdout: 'ok\n', exitCode: 0 })).toEqual({ status: 'ok', exitCode: 0 });
    expect((await store.readJournal(pass.run.id)).map((entry) => `${entry.kind} ${entry.position}`)).toEqual(['call 0', 'result 0']);
  });

  it("given a failed command's stderr tail over 1 KiB, then it is refused; one within is kept beside the result and never answered; a succeeded command's is not kept", async () => {
    const pass = await freshPass();
    expect(await pass.handle({ verb: 'step', name: 'a' })).toMatchObject({ status: 'execute', position: 0 });
    const refused = await pass.handle({ verb: 'done', position: 0, stdout: '', exitCode: 1, stderrTail: 'x'.repeat(1025) });
    expect(refused).toMatchObject({ status: 'error', kind: 'usage' });
    expect(refused.status === 'error' && refused.message).toContain('stderrTail');
    expect(await pass.handle({ verb: 'done', position: 0, stdout: '', exitCode: 1, stderrTail: 'no cars left' })).toEqual({ status: 'ok', exitCode: 1 });
    expect(await pass.handle({ verb: 'step', name: 'b' })).toMatchObject({ status: 'execute', position: 1 });
    expect(await pass.handle({ verb: 'done', position: 1, stdout: 'fine\n', exitCode: 0, stderrTail: 'a warning' })).toEqual({ status: 'ok', exitCode: 0 });
    const results = (await store.readJournal(pass.run.id)).filter((entry) => entry.kind === 'result').map((entry) => entry.data);
    expect(results).toEqual([{ stdout: '', exitCode: 1, stderrTail: 'no cars left' }, { stdout: 'fine\n', exitCode: 0 }]);
    // A replay gets the recorded stdout and exit code, not the tail.
    const replay = await Pass.start(store, (await store.getRun(pass.run.id))!, host);
    expect(await replay.handle({ verb: 'step', name: 'a' })).toEqual({ status: 'ok', stdout: '', exitCode: 1, replayed: true });
  });
});
