import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, finalLog, listRuns, startDev, type RunView, poll, waitForRun } from '../support/dev.js';
import { readLines, removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/** Schedules on `spool dev`: the poll-cursor recipe, and a tick that arrives while the previous run goes on. */

let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

interface ScheduleView {
  name: string;
  everyMs: number | null;
  nextAt: string;
  skipped: number;
  lastRunId: string | null;
  workflow: string;
}

async function schedules(dir: string): Promise<ScheduleView[]> {
  return JSON.parse(await cliOk(dev.url, dir, ['schedule', 'list', '--json'])) as ScheduleView[];
}

/** The runs a schedule started (each schedule here has a script of its own name), oldest first. */
async function runsOf(workflow: string): Promise<RunView[]> {
  return (await listRuns(dev.url))
    .filter((run) => run.workflow === workflow)
    .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

// The two schedules are independent (own names, scripts and cells), so their tests run side by side.
describe.concurrent('schedules', () => {
  it('poll an outside system on a schedule: given a poll every 2s, then each tick continues from the cursor the last one wrote', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'poll.sh': `since="$(spool state get cursor --entity tickets)"

# Stands in for "GET /tickets?since=$since"; prints the new cursor.
latest="$(spool step fetch -- sh -c 'echo $(( \${1:-0} + 10 ))' _ "$since")"

spool step process -- echo "processed tickets \${since:-0}..$latest"
spool state set cursor "$latest" --entity tickets
`,
    });
    const created = Date.now();
    expect(
      await cliOk(dev.url, dir, ['schedule', 'create', '--every', '2s', '--name', 'ticket-poll', 'poll.sh']),
    ).toMatch(/^schedule ticket-poll: next run at \S+\n$/);
    // Its period as people write it, not in milliseconds.
    expect(await cliOk(dev.url, dir, ['schedule', 'list'])).toMatch(/^ticket-poll\s+2s\s+/m);
    const runs = await poll(
      'three ticks of ticket-poll',
      async () => {
        const started = await runsOf('poll.sh');
        return started.length >= 3 ? started.slice(0, 3) : null;
      },
      30_000,
    );
    await cliOk(dev.url, dir, ['schedule', 'delete', 'ticket-poll']);

    // The first tick comes one period after the schedule was made.
    expect(Date.parse(runs[0]?.createdAt ?? '')).toBeGreaterThanOrEqual(created + 1900);
    const logs = await Promise.all(runs.map((run) => finalLog(dev.url, run.id)));
    expect(logs).toEqual(['processed tickets 0..10\n', 'processed tickets 10..20\n', 'processed tickets 20..30\n']);
  }, 60_000);

  it('a tick while the previous run is still going: given runs that take longer than the period, then ticks are skipped and no two runs overlap', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'slow-poll.sh': `spool step work -- sh -c 'echo "start $SPOOL_RUN_ID $(date +%s%N)" >> times.txt; sleep 5; echo "end $SPOOL_RUN_ID $(date +%s%N)" >> times.txt; echo worked'
`,
    });
    await cliOk(dev.url, dir, ['schedule', 'create', '--every', '2s', '--name', 'slow-poll', 'slow-poll.sh']);
    // Ticks at 2s (runs until ~7s), 4s and 6s (skipped), 8s (runs): wait for the second run to end.
    const runs = await poll(
      'two runs of slow-poll to have ended',
      async () => {
        const started = await runsOf('slow-poll.sh');
        return started.filter((run) => run.status === 'succeeded').length >= 2 ? started : null;
      },
      40_000,
    );
    const [listed] = (await schedules(dir)).filter((schedule) => schedule.name === 'slow-poll');
    await cliOk(dev.url, dir, ['schedule', 'delete', 'slow-poll']);

    expect(listed?.skipped).toBeGreaterThan(0);
    for (const run of runs.slice(0, 2)) expect(await finalLog(dev.url, run.id)).toBe('worked\n');
    // No overlap: each run's work started after the one before it ended.
    const times = new Map<string, number>();
    for (const line of readLines(join(dir, 'times.txt'))) {
      const [what, id, ns] = line.split(' ');
      times.set(`${what} ${id}`, Number(BigInt(ns ?? '0') / 1_000_000n));
    }
    const ended = runs.filter((run) => times.has(`end ${run.id}`));
    expect(ended.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < ended.length; i++) {
      expect(times.get(`start ${ended[i]?.id ?? ''}`)).toBeGreaterThan(
        times.get(`end ${ended[i - 1]?.id ?? ''}`) ?? Infinity,
      );
    }
    // and a run was created only once the one before it had finished
    for (let i = 1; i < runs.length; i++) {
      expect(Date.parse(runs[i]?.createdAt ?? '')).toBeGreaterThanOrEqual(Date.parse(runs[i - 1]?.finishedAt ?? ''));
    }
  }, 60_000);

  it('spool schedule trigger: given an hourly schedule, then trigger starts a run now and the next tick stays where it was', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'hourly.sh': 'spool step report -- echo report\n' });
    await cliOk(dev.url, dir, ['schedule', 'create', '--every', '1h', '--name', 'hourly-report', 'hourly.sh']);
    const before = (await schedules(dir)).find((schedule) => schedule.name === 'hourly-report');
    const runId = (await cliOk(dev.url, dir, ['schedule', 'trigger', 'hourly-report'])).trim();
    expect(runId).toMatch(/^dev:default:run-[a-z0-9]{16}$/);
    expect((await waitForRun(dev.url, runId)).status).toBe('succeeded');
    const after = (await schedules(dir)).find((schedule) => schedule.name === 'hourly-report');
    expect(after?.nextAt).toBe(before?.nextAt);
    const unknown = await cli(dev.url, dir, ['schedule', 'trigger', 'no-such-schedule']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.output).toContain('schedule no-such-schedule not found');
  });
});
