import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import {
  cliOk,
  finalLog,
  freePort,
  getRun,
  journalOf,
  startDevProcess,
  submit,
  waitForRun,
  type DevProcess,
  poll,
} from '../support/dev.js';
import { killScripts, readLines, removeTempDirs, scriptProcesses, tempDir, writeFiles } from '../support/spool.js';

/**
 * `spool dev` killed with SIGKILL and started again on the same data dir carries on from the store:
 * sleeping runs wake, queued signals and claimed keys are kept, an interrupted pass is dispatched
 * again and replays, and no step that had completed runs a second time.
 */

const SCRIPTS = {
  // sleeps on a timer across the kill, then waits for a signal sent after the restart (the sleeps
  // are long enough to outlast the steps before the kill on a loaded machine)
  'main.sh': `spool step a -- sh -c 'echo a >> count.txt; echo a'
spool sleep 8s
spool step b -- sh -c 'echo b >> count.txt; date +%s%N'
spool wait signal go
spool step c -- sh -c 'echo c >> count.txt; echo c'
`,
  // claims a key early; the signal it waits for is sent while it still sleeps, before the kill
  'claim.sh': `spool state add k --entity restart-e
echo won
spool sleep 20s
payload="$(spool wait signal finish)"
spool step done -- sh -c 'echo done >> count.txt; echo "finished with $1"' _ "$payload"
`,
  // its pass is under way (in the slow step) when the server is killed
  'long.sh': `spool step before -- sh -c 'echo before >> count.txt'
spool step slow -- sh -c 'echo slow-start >> count.txt; sleep 4; echo slow >> count.txt; echo slow'
spool step after -- sh -c 'echo after >> count.txt'
`,
  // another claim of the same key, after the restart
  'claim-again.sh': `rc=0
spool state add k --entity restart-e || rc=$?
echo "claim exited $rc"
`,
};

let dev: DevProcess | null = null;
const dir = tempDir();

async function kill9(server: DevProcess): Promise<void> {
  process.kill(server.pid, 'SIGKILL');
  await server.exited;
}

afterAll(async () => {
  if (dev && dev.child.exitCode === null && dev.child.signalCode === null) {
    process.kill(dev.pid, 'SIGTERM');
    await Promise.race([dev.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (dev.child.exitCode === null && dev.child.signalCode === null) process.kill(dev.pid, 'SIGKILL');
  }
  killScripts(dir);
  removeTempDirs();
}, 30_000);

describe('spool dev killed with -9 and started again', () => {
  it('given runs sleeping, waiting, holding a claim and mid-step, then after the restart each carries on and no completed step runs twice', async () => {
    onTestFailed(() => {
      if (dev) process.stderr.write(`spool dev (${String(dev.pid)}) wrote:\n${dev.output()}\n`);
    });
    const dataDir = join(dir, 'data');
    const port = await freePort();
    writeFiles(dir, SCRIPTS);
    dev = await startDevProcess(dataDir, port);
    const url = dev.url;

    // The claim: taken, then asleep; its signal is queued while it sleeps.
    const claim = await submit(url, dir, 'claim.sh');
    const claimAsleep = await waitForRun(url, claim, ['waiting']);
    expect(claimAsleep.awaiting).toMatch(/^timer /);
    await cliOk(url, dir, ['signal', claim, 'finish', 'early']);

    // The sleeper and the long step, side by side.
    const [main, long] = await Promise.all([submit(url, dir, 'main.sh'), submit(url, dir, 'long.sh')]);
    const asleep = await waitForRun(url, main, ['waiting']);
    expect(asleep.awaiting).toMatch(/^timer /);
    await poll('the slow step to start', () => readLines(join(dir, 'count.txt')).includes('slow-start'));

    // Both still asleep (the claim's sleep is the longer), the long step under way: kill -9 the
    // server, and the scripts it left behind (a pass's script is a process group of its own).
    expect((await getRun(url, main)).awaiting).toMatch(/^timer /);
    expect((await getRun(url, claim)).awaiting).toMatch(/^timer /);
    expect((await getRun(url, long)).status).toBe('running');
    await kill9(dev);
    expect(killScripts(dir).length).toBeGreaterThanOrEqual(1);
    await poll('no script process to be left', () => scriptProcesses(dir).length === 0, 10_000);
    expect(readLines(join(dir, 'count.txt')).sort()).toEqual(['a', 'before', 'slow-start']);

    // Nothing is sent while it is down. Start it again on the same data dir.
    dev = await startDevProcess(dataDir, port);

    // The interrupted pass is dispatched again and replays: `before` is not run again, `slow` is.
    const longRun = await waitForRun(url, long, ['succeeded', 'failed', 'cancelled'], 30_000);
    expect(longRun.status).toBe('succeeded');
    expect(longRun.passes).toBe(2);

    // The sleeper wakes when its timer is up and reaches the signal wait.
    await poll(
      'the sleeper to wait for its signal',
      async () => (await getRun(url, main)).awaiting === 'signal go',
      30_000,
    );
    const journal = await journalOf(url, main);
    const until = Date.parse(
      String(journal.find((entry) => entry.verb === 'sleep' && entry.kind === 'call')?.data.until),
    );
    const bAt = Number(
      BigInt(String(journal.find((entry) => entry.name === 'b' && entry.kind === 'result')?.data.stdout).trim()) /
        1_000_000n,
    );
    expect(bAt).toBeGreaterThanOrEqual(until);

    // The signal queued before the kill is still there: the claim takes it once its sleep is over.
    expect(await finalLog(url, claim)).toBe('won\nwon\nfinished with early\n');
    expect((await getRun(url, claim)).status).toBe('succeeded');

    // The key claimed before the kill is still claimed.
    const again = await submit(url, dir, 'claim-again.sh');
    expect(await finalLog(url, again)).toBe('claim exited 3\n');

    // A signal sent now ends the sleeper's wait.
    await cliOk(url, dir, ['signal', main, 'go']);
    expect(await finalLog(url, main)).toMatch(/^a\n\d+\nc\n$/);
    expect((await getRun(url, main)).status).toBe('succeeded');

    // Every step that completed ran once; only the step the kill interrupted started twice.
    expect(readLines(join(dir, 'count.txt')).sort()).toEqual(
      ['a', 'b', 'c', 'before', 'slow-start', 'slow-start', 'slow', 'after', 'done'].sort(),
    );
  }, 180_000);
});

describe('spool dev stopped with SIGTERM (Ctrl-C) and started again', () => {
  it('given a run mid-step, then the stop leaves it running, not failed, and after the restart it carries on: its recorded step once, the interrupted one again', async () => {
    const here = tempDir();
    writeFiles(here, { 'long.sh': SCRIPTS['long.sh'] });
    const dataDir = join(here, 'data');
    const port = await freePort();
    let server = await startDevProcess(dataDir, port);
    onTestFailed(() => void process.stderr.write(`spool dev (${String(server.pid)}) wrote:\n${server.output()}\n`));
    const id = await submit(server.url, here, 'long.sh');
    await poll('the slow step to start', () => readLines(join(here, 'count.txt')).includes('slow-start'));
    process.kill(server.pid, 'SIGTERM');
    await server.exited;
    expect(scriptProcesses(here)).toEqual([]);

    server = await startDevProcess(dataDir, port);
    try {
      const run = await waitForRun(server.url, id, ['succeeded']);
      expect(run.passes).toBe(2);
      expect(readLines(join(here, 'count.txt'))).toEqual(['before', 'slow-start', 'slow-start', 'slow', 'after']);
    } finally {
      process.kill(server.pid, 'SIGTERM');
      await server.exited;
    }
  }, 120_000);
});
