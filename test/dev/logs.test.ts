import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliOk, poll, useDevServer, submit, waitForRun } from '../support/dev.js';
import { spool, startSpool, tempDir, writeFiles } from '../support/spool.js';

/**
 * `spool logs`: the run's output, and on request when each line came and where each pass began;
 * `spool status`: which call a running run is in, and which step or activity a failed one failed at.
 */
const dev = useDevServer();

describe('spool logs', () => {
  it('given a run of two passes, then --passes marks where each begins (lines between calls print again on a replay) and --timestamps dates each line', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'twice.sh': 'echo "from the top"\nspool step once -- echo "step output"\nspool sleep 1s\necho done\n' });
    const id = await submit(dev.url, dir, 'twice.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('succeeded');

    expect(await cliOk(dev.url, dir, ['logs', id])).toBe('from the top\nstep output\nfrom the top\ndone\n');
    expect(await cliOk(dev.url, dir, ['logs', id, '--passes'])).toBe('--- pass 1 ---\nfrom the top\nstep output\n--- pass 2 ---\nfrom the top\ndone\n');
    const stamped = (await cliOk(dev.url, dir, ['logs', id, '--timestamps'])).trimEnd().split('\n');
    expect(stamped).toHaveLength(4);
    for (const line of stamped) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (from the top|step output|done)$/);
    // spool runs -o: one id a line, YAML, or the table with the error.
    expect((await cliOk(dev.url, dir, ['runs', '-o', 'name'])).split('\n')).toContain(id);
    expect(await cliOk(dev.url, dir, ['runs', '-o', 'yaml'])).toMatch(new RegExp(`^- id: ${id}$`, 'm'));
    expect((await cliOk(dev.url, dir, ['runs', '-o', 'wide'])).split('\n')[0]).toMatch(/^RUN\s+STATUS\s+AWAITING\s+PASSES\s+AGE\s+WORKFLOW\s+ERROR$/);
    const refused = await cli(dev.url, dir, ['runs', '-o', 'xml']);
    expect(refused.code).toBe(2);
    expect(refused.output).toBe("spool: -o takes json, yaml, name or wide, not 'xml'\n");
    // --follow prints the same, then (on stderr) how the run ended.
    expect(await cliOk(dev.url, dir, ['logs', id, '--follow', '--passes'])).toBe(`--- pass 1 ---\nfrom the top\nstep output\n--- pass 2 ---\nfrom the top\ndone\n  ${id} succeeded\n`);
  });

  it('given runs of several passes that printed, then nothing of their passes is left in the data directory: their text is in the store', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'twice.sh': 'echo "from the top"\nspool sleep 1ms\necho done\n' });
    for (let i = 0; i < 2; i++) {
      const ran = await spool(['run', 'twice.sh', '--data-dir', 'data'], { cwd: dir });
      expect(ran.code, ran.output).toBe(0);
      expect(ran.output).toContain('from the top\nfrom the top\ndone\n');
    }
    // A file a pass, removed once copied, in one flat directory: no empty directory a run either.
    expect(readdirSync(join(dir, 'data', 'logs'))).toEqual([]);
  });

  it("given the empty directories a run each that earlier builds left among the log files, then the next spool run removes them, and keeps one that holds a file and one that is not a run's", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'once.sh': 'echo hi\n' });
    const logs = join(dir, 'data', 'logs');
    mkdirSync(join(logs, 'dev_default_run-old1'), { recursive: true });
    mkdirSync(join(logs, 'dev_default_run-old2'));
    writeFileSync(join(logs, 'dev_default_run-old2', 'pass-1.log'), 'left by a killed pass\n');
    // Not a run's: another program's, as in the temp dir's shared logs/ that PostgreSQL's passes use.
    mkdirSync(join(logs, 'someone-elses'));
    const ran = await spool(['run', 'once.sh', '--data-dir', 'data'], { cwd: dir });
    expect(ran.code, ran.output).toBe(0);
    expect(readdirSync(join(dir, 'data', 'logs')).sort()).toEqual(['dev_default_run-old2', 'someone-elses']);
  });

  it('given a run in the middle of a long step, then spool status says which step is running', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'slow.sh': 'spool step quick -- true\nspool step slow -- sleep 30\n' });
    const id = await submit(dev.url, dir, 'slow.sh');
    const status = await poll('the slow step running', async () => {
      const text = await cliOk(dev.url, dir, ['status', id]);
      return /^running\s/m.test(text) && text;
    });
    expect(status).toMatch(/^status\s+running$/m);
    expect(status).toMatch(/^running\s+step slow \(call 2\)$/m);
    await cliOk(dev.url, dir, ['cancel', id]);
  });

  it("given a run whose step failed, then spool status names the step, its exit code and its stderr's last line", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'car.sh': `spool step book-car -- sh -c 'echo "checking"; echo "no cars left" >&2; exit 4' || { echo "cancelled FL-881"; exit 1; }\n` });
    const id = await submit(dev.url, dir, 'car.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('failed');
    expect((await cliOk(dev.url, dir, ['status', id])).match(/^failedStep\s+(.*)$/m)?.[1]).toBe('book-car (exit 4): no cars left');
  });

  it("given a run whose activity failed, then spool status names the activity, its exit code and its stderr's last line where it names a failed step", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fetch.sh': `spool activity submit fetch -- sh -c 'echo "upstream said 503" >&2; exit 3'\nspool activity wait fetch\n` });
    const id = await submit(dev.url, dir, 'fetch.sh');
    expect((await waitForRun(dev.url, id)).status).toBe('failed');
    const status = await cliOk(dev.url, dir, ['status', id]);
    expect(status.match(/^failedActivity\s+(.*)$/m)?.[1]).toBe('fetch (exit 3): upstream said 503');
    expect(status).not.toMatch(/^failedStep/m);
  });

  it("given a long step, then what it prints reaches spool logs while it runs, and a cancel keeps what it printed", async () => {
    const dir = tempDir();
    // stdout is the step's result (recorded when it ends); stderr is not recorded: both show live.
    writeFiles(dir, { 'long.sh': "spool step build -- sh -c 'echo compiling; echo warning >&2; sleep 60; echo linked'\n" });
    const id = await submit(dev.url, dir, 'long.sh');
    await poll('the first lines while the step runs', async () => {
      const text = await cliOk(dev.url, dir, ['logs', id]);
      return text.includes('compiling\n') && text.includes('warning\n') && text;
    }, 20_000);
    expect((await cliOk(dev.url, dir, ['status', id])).match(/^running\s+(.*)$/m)?.[1]).toBe('step build (call 1)');
    await cliOk(dev.url, dir, ['cancel', id]);
    expect((await waitForRun(dev.url, id)).status).toBe('cancelled');
    const kept = await cliOk(dev.url, dir, ['logs', id]);
    expect(kept.split('\n').filter(Boolean).sort()).toEqual(['compiling', 'warning']);
  });

  it('given spool runs --watch, then a run is printed again as its status changes, until interrupted', async () => {
    const dir = tempDir();
    // A signal, not a short sleep: the watch polls once a second, and a wait shorter than a poll
    // (on a loaded machine) could pass unseen.
    writeFiles(dir, { 'gate.sh': 'spool step a -- true\nspool wait signal go\n' });
    const watching = startSpool(['runs', '--watch'], { cwd: dir, env: { SPOOL_SERVER: dev.url } });
    await poll('the header', () => watching.output().startsWith('RUN '));
    const id = await submit(dev.url, dir, 'gate.sh');
    await poll('the run seen waiting for its signal', () => new RegExp(`^${id}\\s+waiting\\s+signal go\\s`, 'm').test(watching.output()), 30_000);
    await cliOk(dev.url, dir, ['signal', id, 'go']);
    await poll('the run seen succeeded', () => new RegExp(`^${id}\\s+succeeded\\s`, 'm').test(watching.output()), 30_000);
    // Ctrl-C ends it (the test would time out otherwise).
    process.kill(watching.pid, 'SIGINT');
    await watching.done;
  });
});
