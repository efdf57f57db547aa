import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cli,
  cliOk,
  finalLog,
  getRun,
  journalOf,
  logOf,
  poll,
  startDev,
  submit,
  waitForRun,
  type JournalView,
} from '../support/dev.js';
import {
  isAlive,
  processesMentioning,
  readLines,
  removeTempDirs,
  scriptCopies,
  tempDir,
  writeFiles,
} from '../support/spool.js';

/**
 * Script recipes of the durable-patterns document on one `spool dev` server: fan out with
 * activities, a lock per customer, approval by signal with a timeout, and cancelling a run.
 */

let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('fan out over a list and collect the results', () => {
  it('given three probes submitted before any wait, then their results print in the order they are waited for', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'fan-out.sh': `regions="eu-north us-east ap-south"

# Submit every item before waiting on any, so they run side by side.
for region in $regions; do
  spool activity submit "probe-$region" --requires shell --attempts 3 --backoff 5s \\
    -- sh -c 'echo "$1: $((RANDOM % 50 + 10))ms"' _ "$region"
done

for region in $regions; do
  spool activity wait "probe-$region"
done
`,
    });
    // --follow prints the run id, the log as it grows, and the outcome, and exits with it.
    const followed = await cli(dev.url, dir, ['submit', 'fan-out.sh', '--follow']);
    expect(followed.code).toBe(0);
    const [first, ...lines] = followed.output.trimEnd().split('\n');
    const id = /^ {2}run: (\S+)$/.exec(first ?? '')?.[1] ?? '';
    expect(lines).toHaveLength(4);
    ['eu-north', 'us-east', 'ap-south'].forEach((region, i) =>
      expect(lines[i]).toMatch(new RegExp(`^${region}: \\d+ms$`)),
    );
    expect(lines[3]).toBe(`  ${id} succeeded`);
    expect(await logOf(dev.url, id)).toBe(
      lines
        .slice(0, 3)
        .map((line) => `${line}\n`)
        .join(''),
    );

    const journal = JSON.parse(await cliOk(dev.url, dir, ['journal', id, '--json'])) as JournalView[];
    const calls = journal.filter((entry) => entry.kind === 'call').map((entry) => `${entry.verb} ${entry.name}`);
    expect(calls).toEqual([
      'activity.submit probe-eu-north',
      'activity.submit probe-us-east',
      'activity.submit probe-ap-south',
      'activity.wait probe-eu-north',
      'activity.wait probe-us-east',
      'activity.wait probe-ap-south',
    ]);
  }, 60_000);

  it('given an item whose command exits 1 on every attempt, then its activity wait exits non-zero and the run fails under -e', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'fan-out-fail.sh': `for region in eu-north bad-region; do
  spool activity submit "probe-$region" --requires shell --attempts 3 --backoff 200ms \\
    -- sh -c 'if [ "$1" = bad-region ]; then echo "$1 unreachable" >&2; exit 1; fi; echo "$1: 12ms"' _ "$region"
done

spool activity wait probe-eu-north
rc=0
spool activity wait probe-bad-region || rc=$?
echo "bad-region wait exited $rc"
# uncaught, the failed wait ends the run under errexit
spool activity wait probe-bad-region
echo "not reached"
`,
    });
    const followed = await cli(dev.url, dir, ['submit', 'fan-out-fail.sh', '--follow']);
    expect(followed.code).toBe(1);
    const id = /^ {2}run: (\S+)$/m.exec(followed.output)?.[1] ?? '';
    expect(followed.output.trimEnd().split('\n').at(-1)).toBe(`  ${id} failed: script exited 1`);
    const log = await logOf(dev.url, id);
    const run = await getRun(dev.url, id);
    expect(run.status).toBe('failed');
    expect(run.error).toBe('script exited 1');
    expect(log).toContain('eu-north: 12ms\n');
    expect(log).toContain('bad-region wait exited 1\n');
    expect(log).toContain('spool: activity probe-bad-region failed with exit 1 after 3 attempts');
    expect(log).not.toContain('not reached');
  }, 60_000);

  it('given the seed\'s names, then activity wait-all waits for every item and activity collect gives one item\'s result', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'collect.sh': `for item in a b; do spool activity submit "job-$item" -- echo "done $item"; done
spool activity wait-all
echo "all done"
spool activity collect job-b
`,
    });
    const followed = await cli(dev.url, dir, ['submit', 'collect.sh', '--follow']);
    expect(followed.code).toBe(0);
    const id = /^ {2}run: (\S+)$/m.exec(followed.output)?.[1] ?? '';
    expect(await logOf(dev.url, id)).toBe('all done\ndone b\n');
  }, 60_000);
});

describe('a lock per customer', () => {
  // The seed's script, writing when each part ran (ns) beside the run id. The section sleeps 3s as
  // the seed's does: long enough that three runs submitted together all reach their fetch before
  // the first section ends, even with a Node start-up per call on a busy machine.
  const lockScript = (customer: string): string => `customer=${customer}
spool step fetch -- sh -c 'echo "fetch $SPOOL_RUN_ID $(date +%s%N)" >> times.txt; echo "fetched for $1"' _ "$customer"
spool lock "customer-$customer" -- sh -c 't=$(date +%s%N); echo "start $SPOOL_RUN_ID $t" >> times.txt; echo "start $(date +%T)"; sleep 3; t=$(date +%s%N); echo "end $SPOOL_RUN_ID $t" >> times.txt; echo "end $(date +%T)"'
`;
  const LOG = /^fetched for \w+\nstart \d\d:\d\d:\d\d\nend \d\d:\d\d:\d\d\n$/;

  /** When each run's fetch, section start and section end ran (ms), from times.txt. */
  function timesIn(dir: string): (what: 'fetch' | 'start' | 'end', id: string) => number {
    const times = new Map<string, number>();
    for (const line of readLines(join(dir, 'times.txt'))) {
      const [what, id, ns] = line.split(' ');
      times.set(`${what} ${id}`, Number(BigInt(ns ?? '0') / 1_000_000n));
    }
    return (what, id) => {
      const value = times.get(`${what} ${id}`);
      if (value === undefined) throw new Error(`no '${what}' line for ${id} in times.txt`);
      return value;
    };
  }

  function expectOneAtATime(at: ReturnType<typeof timesIn>, ids: string[]): string[] {
    const byStart = [...ids].sort((a, b) => at('start', a) - at('start', b));
    for (let i = 1; i < byStart.length; i++) {
      expect(at('start', byStart[i] ?? '')).toBeGreaterThanOrEqual(at('end', byStart[i - 1] ?? ''));
    }
    return byStart;
  }

  it('given three runs for acme submitted together, then their locked sections never overlap while the unlocked step does not wait', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'lock.sh': lockScript('acme'), 'lock-globex.sh': lockScript('globex') });
    // Submitted together.
    const ids = await Promise.all(
      ['lock.sh', 'lock.sh', 'lock.sh', 'lock-globex.sh'].map((file) => submit(dev.url, dir, file)),
    );
    const acme = ids.slice(0, 3);
    const globex = ids[3] ?? '';
    for (const id of ids) {
      expect(await finalLog(dev.url, id)).toMatch(LOG);
      expect((await getRun(dev.url, id)).status).toBe('succeeded');
    }

    const at = timesIn(dir);
    const byStart = expectOneAtATime(at, acme);
    // The work outside the lock doesn't wait: every fetch ran before the first section ended.
    const firstRelease = at('end', byStart[0] ?? '');
    for (const id of acme) expect(at('fetch', id)).toBeLessThan(firstRelease);
    // A run for another customer takes another lock, and goes ahead alongside acme's.
    expect(at('start', globex)).toBeLessThan(at('end', byStart[2] ?? ''));
    expect(at('end', globex)).toBeGreaterThan(at('start', byStart[0] ?? ''));
  }, 60_000);

  it('given three runs queued on a held lock one after another, then they get it in the order they were submitted', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'lock.sh': lockScript('initech'),
      // holds the customer's lock (the bare form: until the run ends) until it is told to let go
      'gate.sh': `spool lock customer-initech\nspool wait signal open\n`,
    });
    const gate = await submit(dev.url, dir, 'gate.sh');
    await poll(
      'the gate to hold the lock and wait',
      async () => (await getRun(dev.url, gate)).awaiting === 'signal open',
    );
    // Each one is submitted once the one before it waits for the lock, so the submission order is unambiguous.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await submit(dev.url, dir, 'lock.sh');
      await poll(
        `run ${i + 1} to wait for the lock`,
        async () => (await getRun(dev.url, id)).awaiting === 'lease customer-initech',
      );
      ids.push(id);
    }
    const at = timesIn(dir);
    for (const id of ids) expect(at('fetch', id)).toBeGreaterThan(0); // the unlocked part ran while the gate held the lock

    await cliOk(dev.url, dir, ['signal', gate, 'open']);
    expect((await waitForRun(dev.url, gate)).status).toBe('succeeded');
    for (const id of ids) {
      expect(await finalLog(dev.url, id)).toMatch(LOG);
      expect((await getRun(dev.url, id)).status).toBe('succeeded');
    }
    expect(expectOneAtATime(timesIn(dir), ids)).toEqual(ids);
  }, 60_000);
});

describe('approval in a script: a signal with a timeout', () => {
  const APPROVAL = `if spool wait signal approve --timeout 3s; then echo approved; else echo escalate; fi
`;

  it('given the signal is sent while the run waits, then it takes the approved branch with the payload', async () => {
    const dir = tempDir();
    // A longer timeout than the seed's 3s: on a loaded machine the CLI that sends the signal can
    // take longer than that to start, and the wait would time out before it arrives (seen twice).
    writeFiles(dir, { 'approval.sh': APPROVAL.replace('--timeout 3s', '--timeout 60s') });
    const id = await submit(dev.url, dir, 'approval.sh');
    const waiting = await waitForRun(dev.url, id, ['waiting']);
    expect(waiting.awaiting).toBe('signal approve');
    expect(await cliOk(dev.url, dir, ['signal', id, 'approve', 'yes'])).toBe(`signal approve queued for ${id}\n`);
    const log = await finalLog(dev.url, id);
    expect((await getRun(dev.url, id)).status).toBe('succeeded');
    expect(log).toBe('yes\napproved\n');
  }, 60_000);

  it('given no signal comes, then the wait times out after 3s and the run escalates', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'approval.sh': APPROVAL });
    const started = Date.now();
    const id = await submit(dev.url, dir, 'approval.sh');
    const log = await finalLog(dev.url, id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect((await getRun(dev.url, id)).status).toBe('succeeded');
    expect(log).toBe('spool: wait signal approve timed out after 3s\nescalate\n');
  }, 60_000);

  it('given the signal is sent before the run reaches the wait, then it is kept and taken (signals queue)', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      // The step goes on only once the test has sent the signal, however slow the machine.
      'approval-late.sh': `spool step prepare -- sh -c 'touch preparing; while [ ! -e signalled ]; do sleep 0.1; done; echo prepared'
${APPROVAL}`,
    });
    const id = await submit(dev.url, dir, 'approval-late.sh');
    await poll('the prepare step to start', () => existsSync(join(dir, 'preparing')));
    const before = await getRun(dev.url, id);
    expect(before.status).toBe('running');
    expect(before.awaiting).toBeNull();
    await cliOk(dev.url, dir, ['signal', id, 'approve', 'early']);
    writeFileSync(join(dir, 'signalled'), '');
    const log = await finalLog(dev.url, id);
    expect((await getRun(dev.url, id)).status).toBe('succeeded');
    expect(log).toBe('prepared\nearly\napproved\n');
    // taken on the first pass: the wait never suspended
    expect((await getRun(dev.url, id)).passes).toBe(1);
  }, 60_000);
});

describe('spool cancel', () => {
  it('given a run whose step sleeps, when it is cancelled, then it ends cancelled and no process of its script is left', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'long.sh': `echo $$ > script.pid
spool step long -- sh -c 'echo $$ > step.pid; sleep 30; echo woke'
echo "not reached"
`,
    });
    const id = await submit(dev.url, dir, 'long.sh');
    const [scriptPid, stepPid] = await poll('the step to start', () => {
      const pids = [...readLines(join(dir, 'script.pid')), ...readLines(join(dir, 'step.pid'))].map(Number);
      return pids.length === 2 ? pids : null;
    });
    expect(isAlive(scriptPid ?? 0)).toBe(true);
    expect(isAlive(stepPid ?? 0)).toBe(true);
    expect((await getRun(dev.url, id)).status).toBe('running');

    const answer = await cli(dev.url, dir, ['cancel', id]);
    expect(answer.code).toBe(0);
    expect(answer.output).toBe(`cancelled ${id}\n`);
    const run = await waitForRun(dev.url, id, ['cancelled', 'succeeded', 'failed']);
    expect(run.status).toBe('cancelled');
    expect(run.error).toBe('cancelled');
    await poll('the script and its step to end', () => !isAlive(scriptPid ?? 0) && !isAlive(stepPid ?? 0), 10_000);
    await poll(
      'no process of the script to be left',
      () => processesMentioning(scriptCopies(dir)).length === 0,
      10_000,
    );
    // It stays cancelled once its pass has ended, and a second cancel says it had ended.
    await sleep(300);
    expect((await getRun(dev.url, id)).status).toBe('cancelled');
    expect(await logOf(dev.url, id)).not.toContain('not reached');
    expect((await cli(dev.url, dir, ['cancel', id])).output).toBe(`${id} had already ended (cancelled)\n`);
  }, 60_000);

  it('given a script that ignores SIGTERM, when its run is cancelled while a step runs, then the step that finishes afterwards records nothing, nor does any call after it', async () => {
    const dir = tempDir();
    // The step's client in a session of its own and a script that ignores SIGTERM: both outlive
    // the ending, so the step's done reaches the pass after its run was cancelled (as it does when
    // a busy machine runs the killed command's exit before the killed client's).
    writeFiles(dir, {
      'stubborn.sh': `trap '' TERM
setsid spool step long -- sh -c 'echo started; sleep 1; echo finished'
spool step after -- echo after
`,
    });
    const id = await submit(dev.url, dir, 'stubborn.sh');
    await poll('the step to start', async () => (await logOf(dev.url, id)).includes('started'));
    expect((await cli(dev.url, dir, ['cancel', id])).output).toBe(`cancelled ${id}\n`);
    await poll('the script to end', () => processesMentioning(scriptCopies(dir)).length === 0, 10_000);

    expect((await getRun(dev.url, id)).status).toBe('cancelled');
    await sleep(3000); console.log(await logOf(dev.url, id));
    const journal = await journalOf(dev.url, id);
    console.log(JSON.stringify(journal));
    expect(journal.map((entry) => `${entry.kind} ${entry.verb} ${entry.name}`)).toEqual(['call step long']);
  }, 60_000);

  it('given a run waiting for an activity whose command sleeps, when it is cancelled, then the command is ended and no attempt follows', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'attempt.pid');
    writeFiles(dir, {
      'slow.sh': `spool activity submit slow --attempts 3 --backoff 200ms -- sh -c 'echo "$SPOOL_ATTEMPT $$" >> ${pidFile}; exec sleep 30'
spool activity wait slow
`,
    });
    const id = await submit(dev.url, dir, 'slow.sh');
    const [attempt, pid] = (await poll('the attempt to start', () => readLines(pidFile)[0] ?? null)).split(' ').map(Number);
    expect(attempt).toBe(1);
    expect(isAlive(pid ?? 0)).toBe(true);

    expect((await cli(dev.url, dir, ['cancel', id])).output).toBe(`cancelled ${id}\n`);

    await poll('the attempt to be ended', () => !isAlive(pid ?? 0), 10_000);
    const [activity] = await dev.store.listActivities(id);
    await poll('the attempt to be recorded as the last', async () => (await dev.store.getActivity(activity?.id ?? ''))?.status === 'failed', 10_000);
    // Its --attempts would have tried again after 200 ms: nothing does, for a run that has ended.
    await sleep(1000);
    expect(readLines(pidFile)).toHaveLength(1);
  }, 60_000);
});
