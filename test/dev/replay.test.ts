import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, journalOf, startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';

/**
 * `spool replay RUN` (docs/testing-workflows.md): a run of `spool dev` replayed here, in a new
 * directory, against a copy of its journal, with the script as it is now; nothing runs, nothing changes.
 */

let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** A script whose first step counts its executions in a file outside the engine, and whose second prints bytes that are not UTF-8. */
const script = (count: string, second = 'two'): string => `spool step one -- sh -c 'echo ran >> ${count}; echo first'
spool step ${second} -- printf '\\377\\376x' > "\${REPLAY_OUT:-/dev/null}"
spool step three -- echo third
spool wait signal go
`;

describe('spool replay of a spool dev run', () => {
  it('replays with its own script cleanly, running no step, returning recorded bytes as they were; a renamed step diverges there; the journal is unchanged', async () => {
    const dir = tempDir();
    const count = join(dir, 'count');
    writeFiles(dir, { 'wf.sh': script(count) });
    const id = await submit(dev.url, dir, 'wf.sh');
    await waitForRun(dev.url, id, ['waiting']);
    const before = await journalOf(dev.url, id);
    expect(readFileSync(count, 'utf8')).toBe('ran\n');

    const out = join(tempDir(), 'out');
    const clean = await spool(['replay', id], { cwd: dir, env: { SPOOL_SERVER: dev.url, REPLAY_OUT: out } });
    expect(clean.output).toContain('replays cleanly: 4 calls; the run has no result for the last, `wait.signal go`, yet');
    expect(clean.code).toBe(0);
    // The step was answered from the journal, not run; its recorded bytes came back byte for byte.
    expect(readFileSync(count, 'utf8')).toBe('ran\n');
    expect(readFileSync(out)).toEqual(Buffer.from([0xff, 0xfe, 0x78]));

    writeFileSync(join(dir, 'wf.sh'), script(count, 'deux'));
    const diverged = await cli(dev.url, dir, ['replay', id]);
    expect(diverged.output).toContain('diverges at call 2 (wf.sh:2): the journal recorded `step two` there, but the script reached `step deux`');
    expect(diverged.code).toBe(1);

    const lenient = await cli(dev.url, dir, ['replay', id, '--lenient']);
    expect(lenient.output).toContain('call 2 (wf.sh:2): the journal recorded `step two` there, but the script reached `step deux`; a lenient replay answers it with the recorded result');
    expect(lenient.output).toContain('replays leniently: 4 calls, 1 of them not the call recorded');
    expect(lenient.code).toBe(0);

    expect(readFileSync(count, 'utf8')).toBe('ran\n');
    expect(await journalOf(dev.url, id)).toEqual(before);
    expect((await waitForRun(dev.url, id, ['waiting'])).passes).toBe(1);
    // Four CLI processes, three of them replays (each opens an in-memory PGlite): over 3 min on a loaded 2-core machine.
  }, 600_000);

  it('stops at a new call past the end of the journal without running it, and names a script that ends early', async () => {
    const dir = tempDir();
    const count = join(dir, 'count');
    writeFiles(dir, { 'short.sh': 'spool step one -- echo one\n' });
    const id = await submit(dev.url, dir, 'short.sh');
    await waitForRun(dev.url, id, ['succeeded']);

    writeFiles(dir, { 'longer.sh': `spool step one -- echo one\nspool step two -- sh -c 'echo ran >> ${count}'\n` });
    const longer = await cli(dev.url, dir, ['replay', id, '--script', 'longer.sh']);
    expect(longer.output).toContain('replays cleanly: 1 call; the script goes on to a new call, `step two` (longer.sh:2), which a replay does not run');
    expect(longer.code).toBe(0);
    expect(() => readFileSync(count)).toThrow();

    writeFiles(dir, { 'none.sh': 'echo nothing\n' });
    const none = await cli(dev.url, dir, ['replay', id, '--script', 'none.sh']);
    expect(none.output).toContain('diverges at call 1: the journal recorded 1 call, but the script ended (succeeded) after 0');
    expect(none.code).toBe(1);
  }, 300_000);

  it('replays a pipeline run through its coordinator', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'pipe.yaml': 'name: pipe\njobs:\n  build:\n    steps:\n      - name: build\n        run: echo built\n  ship:\n    depends_on: [build]\n    steps:\n      - name: ship\n        run: echo shipped\n',
    });
    const id = await submit(dev.url, dir, 'pipe.yaml');
    await waitForRun(dev.url, id, ['succeeded']);
    const before = await journalOf(dev.url, id);
    const replay = await cli(dev.url, dir, ['replay', id]);
    expect(replay.output).toContain(`replays cleanly: ${new Set(before.map((entry) => entry.position)).size} calls; then the script ended (succeeded)`);
    expect(replay.code).toBe(0);
    expect(await journalOf(dev.url, id)).toEqual(before);
  }, 300_000);

  it('replays a graph run through its runner, running none of its nodes', async () => {
    const dir = tempDir();
    const count = join(dir, 'count');
    writeFiles(dir, {
      'graph.yaml': [
        'name: g',
        'nodes:',
        '  - id: count',
        '    type: script',
        '    config:',
        '      interpreter: bash',
        '      body: |',
        `        echo ran >> ${count}`,
        '        spool output set n 1',
        '  - id: hook',
        '    type: wait',
        '    depends_on: [count]',
        '    config: { signal: go, timeout: 1s }',
        '',
      ].join('\n'),
    });
    const id = await submit(dev.url, dir, 'graph.yaml');
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    const before = await journalOf(dev.url, id);
    const replay = await cli(dev.url, dir, ['replay', id]);
    expect(replay.output).toContain(`replays cleanly: ${new Set(before.map((entry) => entry.position)).size} calls; then the script ended (succeeded)`);
    expect(replay.code).toBe(0);
    expect(readFileSync(count, 'utf8')).toBe('ran\n');
    expect(await journalOf(dev.url, id)).toEqual(before);
  }, 300_000);

  it('refuses an unknown run and a missing script in one line, non-zero', async () => {
    const dir = tempDir();
    const unknown = await cli(dev.url, dir, ['replay', 'dev:default:run-0000000000000000']);
    expect(unknown.output).toMatch(/^spool: .*run-0000000000000000.*\n$/);
    expect(unknown.code).not.toBe(0);

    writeFiles(dir, { 'gone.sh': 'spool step one -- echo one\n' });
    const id = await submit(dev.url, dir, 'gone.sh');
    await waitForRun(dev.url, id, ['succeeded']);
    const missing = await cli(dev.url, dir, ['replay', id, '--script', 'nope.sh']);
    expect(missing.output).toBe(`spool: ${join(dir, 'nope.sh')}: no such file\n`);
    expect(missing.code).toBe(2);

    rmSync(join(dir, 'gone.sh'));
    const gone = await cli(dev.url, dir, ['replay', id]);
    expect(gone.output).toBe(`spool: the script of ${id}, gone.sh, is not here: pass --script FILE\n`);
    expect(gone.code).toBe(2);
  }, 300_000);
});
