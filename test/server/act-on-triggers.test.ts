import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseOf } from '../../src/api/responses.js';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { cli, cliOk, poll, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * Acting on what starts runs (issue 33, item 9) on a real `spool dev`: a schedule suspended makes no
 * ticks and has no next tick, stays suspended across a restart, still starts a run when triggered,
 * and resumed ticks again from then (the ticks it missed are not made up); each schedule lists its
 * last runs; a handler lists its events, a page at a time, each with the run it started.
 */

type Schedule = ResponseOf<'GET /schedules'>['schedules'][number];

const dataDir = `${tempDir('spool-act-triggers-')}/data`;
const dir = tempDir();
let dev: DevServer;

const start = () => startDevServer({ port: 0, dataDir, pollMs: 50 });

beforeAll(async () => {
  dev = await start();
  writeFiles(dir, { 'tick.sh': 'spool step tick -- echo tick\n', 'on-order.sh': 'spool step take -- echo taken\n' });
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

async function call<T>(method: string, path: string): Promise<{ status: number; json: T }> {
  const response = await fetch(`${dev.url}/v1${path}`, { method, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
  return { status: response.status, json: (await response.json()) as T };
}

async function schedule(name: string): Promise<Schedule> {
  const { json } = await call<ResponseOf<'GET /schedules'>>('GET', '/schedules');
  const found = json.schedules.find((each) => each.name === name);
  if (!found) throw new Error(`no schedule ${name}`);
  return found;
}

describe('schedules: suspend, resume, trigger and their last runs', () => {
  it('a suspended schedule makes no ticks and shows no next tick, across a restart; trigger still starts a run; resumed, it ticks from now', async () => {
    await cliOk(dev.url, dir, ['schedule', 'create', '--every', '300ms', '--name', 'often', 'tick.sh']);
    const ticked = await poll('a tick of often', async () => ((await schedule('often')).recentRuns.length > 0 ? schedule('often') : null));
    expect(ticked.suspendedAt).toBeNull();

    expect(await cliOk(dev.url, dir, ['schedule', 'suspend', 'often'])).toMatch(/^schedule often: suspended since \d{4}-\S+Z\n$/);
    const suspended = await schedule('often');
    expect(suspended.nextAt).toBeNull();
    expect(suspended.suspendedAt).not.toBeNull();
    expect(await cliOk(dev.url, dir, ['schedule', 'list'])).toMatch(/^often\s+300ms\s+suspended\s+/m);
    const count = suspended.recentRuns.length;
    const newest = suspended.recentRuns[0]?.id;

    // A restart on the same data keeps it suspended; five periods on, it has made no tick.
    await dev.close();
    dev = await start();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const restarted = await schedule('often');
    expect(restarted.suspendedAt).toBe(suspended.suspendedAt);
    expect(restarted.nextAt).toBeNull();
    expect(restarted.recentRuns[0]?.id).toBe(newest);
    expect(restarted.recentRuns.length).toBe(count);

    // Trigger now starts a run while suspended; the list shows it first, with its phase.
    const triggered = await call<ResponseOf<'POST /schedules/:name/trigger'>>('POST', '/schedules/often/trigger');
    expect(triggered.status).toBe(201);
    expect((await waitForRun(dev.url, triggered.json.run)).status).toBe('succeeded');
    expect((await schedule('often')).recentRuns[0]).toMatchObject({ id: triggered.json.run, status: 'succeeded' });
    expect((await schedule('often')).nextAt).toBeNull();

    const resumedAt = Date.now();
    const resumed = await call<ResponseOf<'POST /schedules/:name/resume'>>('POST', '/schedules/often/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.json.schedule.suspendedAt).toBeNull();
    // The next tick is one period from now: the six it missed are not made up.
    const next = Date.parse(resumed.json.schedule.nextAt ?? '');
    expect(next).toBeGreaterThan(resumedAt);
    expect(next).toBeLessThanOrEqual(Date.now() + 300);
    const after = await poll('a tick after resuming', async () => {
      const now = await schedule('often');
      return now.recentRuns[0]?.id !== triggered.json.run ? now : null;
    });
    expect(Date.parse(after.recentRuns[0]?.createdAt ?? '')).toBeGreaterThanOrEqual(next);
    // At most five of its last runs, newest first.
    await cliOk(dev.url, dir, ['schedule', 'suspend', 'often']);
    const last = await schedule('often');
    expect(last.recentRuns.length).toBeLessThanOrEqual(5);
    const times = last.recentRuns.map((run) => Date.parse(run.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    await cliOk(dev.url, dir, ['schedule', 'delete', 'often']);
  }, 60_000);

  it('suspend or resume of a schedule that is not there: one line and a non-zero exit, 404 from the API', async () => {
    for (const verb of ['suspend', 'resume']) {
      const result = await cli(dev.url, dir, ['schedule', verb, 'nowhere']);
      expect(result.code).not.toBe(0);
      expect(result.output.trim().split('\n')).toEqual([expect.stringContaining('schedule nowhere not found')]);
      const answer = await call<{ error: { code: string } }>('POST', `/schedules/nowhere/${verb}`);
      expect(answer.status).toBe(404);
      expect(answer.json.error.code).toBe('not_found');
    }
  });

  it('resuming a schedule that was not suspended leaves its next tick where it was', async () => {
    await cliOk(dev.url, dir, ['schedule', 'create', '--every', '1h', '--name', 'hourly', 'tick.sh']);
    const before = await schedule('hourly');
    expect(await cliOk(dev.url, dir, ['schedule', 'resume', 'hourly'])).toBe(`schedule hourly: next run at ${before.nextAt}\n`);
    expect((await schedule('hourly')).nextAt).toBe(before.nextAt);
    await cliOk(dev.url, dir, ['schedule', 'delete', 'hourly']);
  });
});

describe("a handler's events", () => {
  it('lists the events of its type newest first, a page at a time, each with the run it started for this handler', async () => {
    await cliOk(dev.url, dir, ['event', 'emit', 'order.placed', '--key', 'early', '--id', 'evt-early']);
    await cliOk(dev.url, dir, ['handler', 'set', 'take-order', 'on-order.sh', '--on', 'order.placed']);
    for (const n of [1, 2, 3]) await cliOk(dev.url, dir, ['event', 'emit', 'order.placed', '--key', `order-${n}`, '--id', `evt-${n}`]);
    await cliOk(dev.url, dir, ['event', 'emit', 'order.cancelled', '--key', 'other']);

    type Events = ResponseOf<'GET /handlers/:name/events'>;
    const first = await call<Events>('GET', '/handlers/take-order/events?limit=2');
    expect(first.json.events.map((event) => [event.id, event.subject])).toEqual([['evt-3', 'order-3'], ['evt-2', 'order-2']]);
    for (const event of first.json.events) {
      expect(event.run).not.toBeNull();
      const run = await waitForRun(dev.url, event.run?.id ?? '');
      expect(run).toMatchObject({ handler: 'take-order', subject: event.subject });
    }
    expect(first.json.next).not.toBeNull();
    const second = await call<Events>('GET', `/handlers/take-order/events?limit=2&before=${first.json.next ?? ''}`);
    expect(second.json.events.map((event) => event.id)).toEqual(['evt-1', 'evt-early']);
    // The event that came before the handler existed started no run for it.
    expect(second.json.events[1]?.run).toBeNull();
    expect(second.json.events[0]?.run?.id).toMatch(/^dev:default:run-/);
    const third = await call<Events>('GET', `/handlers/take-order/events?limit=2&before=${second.json.next ?? ''}`);
    expect(third.json).toEqual({ events: [], next: null });

    expect((await call('GET', '/handlers/nobody/events')).status).toBe(404);
    const bad = await call<{ error: { code: string; message: string } }>('GET', '/handlers/take-order/events?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain('limit');
  });
});
