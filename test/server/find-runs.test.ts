import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseOf } from '../../src/api/responses.js';
import { cli, cliOk, startDev, submit, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';
import type { Dev } from '../pipeline-run/pipeline-support.js';

/** Finding runs through `GET /v1/runs` (docs/api.md): text, a time range, an order, counts per status, and the values it refuses. */

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
}, 60_000);
afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

type Page = ResponseOf<'GET /runs'>;

async function list(query: string): Promise<{ status: number; json: Page & { error?: { code: string; message: string } } }> {
  const response = await fetch(`${dev.url}/v1/runs?${query}`);
  return { status: response.status, json: (await response.json()) as Page & { error?: { code: string; message: string } } };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('finding runs', () => {
  it('given runs of two workflows, one failed with a labelled step, when searched, then text, a time range, an order and the counts agree', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'Invoice-Batch.sh': `spool step charge --label 'Charge ACME' -- sh -c 'exit 4'\n`,
      'nightly.sh': 'spool output set report "$(echo done-Report)"\n',
    });
    const failed = await submit(dev.url, dir, 'Invoice-Batch.sh', '--input', JSON.stringify({ customer: 'Globex' }));
    expect((await waitForRun(dev.url, failed)).status).toBe('failed');
    await pause(5);
    const first = await submit(dev.url, dir, 'nightly.sh');
    expect((await waitForRun(dev.url, first)).status).toBe('succeeded');
    await pause(5);
    const second = await submit(dev.url, dir, 'nightly.sh');
    const done = await waitForRun(dev.url, second);
    expect(done.status).toBe('succeeded');

    const ids = async (query: string): Promise<string[]> => {
      const { status, json } = await list(`project=default&${query}`);
      expect(status, JSON.stringify(json)).toBe(200);
      return json.runs.map((run) => run.id);
    };
    expect(await ids('q=charge%20acme')).toEqual([failed]);
    expect(await ids('q=GLOBEX')).toEqual([failed]);
    expect(await ids('q=invoice')).toEqual([failed]);
    expect(await ids('q=DONE-report')).toEqual([second, first]);
    expect(await ids(`q=${encodeURIComponent(second.slice(-10).toUpperCase())}`)).toEqual([second]);
    expect(await ids('q=nightly&sort=created')).toEqual([first, second]);
    expect(await ids(`since=${encodeURIComponent(done.createdAt)}`)).toEqual([second]);
    expect(await ids(`until=${encodeURIComponent(done.createdAt)}&sort=created`)).toEqual([failed, first]);
    expect(await ids('since=2000-01-01&until=2000-01-02')).toEqual([]);

    // Every order pages to the same runs, one at a time.
    for (const sort of ['-created', 'created', '-updated', 'updated', '-duration', 'duration']) {
      const seen: string[] = [];
      let before: string | null = null;
      do {
        const { json }: { json: Page } = await list(`project=default&limit=1&sort=${sort}${before ? `&before=${before}` : ''}`);
        seen.push(...json.runs.map((run) => run.id));
        before = json.next;
      } while (before);
      expect(seen.sort(), sort).toEqual([failed, first, second].sort());
    }

    // Counts leave the status filter out; they are there only when asked for.
    const counted = await list('project=default&status=failed&counts=true');
    expect(counted.json.runs.map((run) => run.id)).toEqual([failed]);
    expect(counted.json.counts).toEqual({ pending: 0, running: 0, waiting: 0, succeeded: 2, failed: 1, cancelled: 0 });
    expect((await list('project=default&q=nightly&counts=true')).json.counts).toMatchObject({ succeeded: 2, failed: 0 });
    expect((await list('project=default')).json).not.toHaveProperty('counts');

    // The same through `spool runs`: a duration back from now or a time, an order, text.
    const names = async (...args: string[]): Promise<string[]> => (await cliOk(dev.url, dir, ['runs', '-o', 'name', ...args])).split('\n').filter(Boolean);
    expect(await names('--search', 'NIGHTLY', '--sort', 'created')).toEqual([first, second]);
    expect(await names('--search', 'globex', '--since', '1h')).toEqual([failed]);
    expect(await names('--since', done.createdAt)).toEqual([second]);
    expect(await names('--until', done.createdAt, '--status', 'succeeded')).toEqual([first]);
    expect(await names('--until', '1h')).toEqual([]);
  });

  it('spool runs --help names the search flags; a bad value exits 2 with one line', async () => {
    const dir = tempDir();
    const help = await cliOk(dev.url, dir, ['runs', '--help']);
    for (const flag of ['--search <text>', '--since <time>', '--until <time>', '--sort <order>']) expect(help).toContain(flag);
    for (const [args, said] of [
      [['--sort', 'name'], "spool: --sort takes -created, created, -updated, updated, -duration, duration, not 'name'\n"],
      [['--since', 'yesterday'], "spool: --since takes a duration back from now (30m, 2h, 7d) or an ISO 8601 time (2026-12-06T08:00:00Z), not 'yesterday'\n"],
      [['--search', ''], 'spool: --search takes text of one line, not empty\n'],
      [['--until', '2026-02-30'], "spool: 'until' must be a real time, ISO 8601 (2026-12-06T08:00:00Z or 2026-12-06), not '2026-02-30'\n"],
    ] as const) {
      const refused = await cli(dev.url, dir, ['runs', ...args]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.output).toBe(said);
    }
  });

  it.each([
    ['q=a%00b', "'q'"],
    ['q=a%0Ab', "'q'"],
    [`q=${'x'.repeat(201)}`, "'q'"],
    ['q=', "'q'"],
    ['q=a&q=b', "'q'"],
    ['since=yesterday', "'since'"],
    ['since=2026-02-30', "'since'"],
    ['until=2026-12-06T24:00:00Z', "'until'"],
    ['until=2026-12-06T08:00:00', "'until'"],
    ['sort=name', "'sort'"],
    ['sort=-created,updated', "'sort'"],
    ['counts=yes', "'counts'"],
  ])('refuses %s with 400 bad_request naming the parameter', async (query, named) => {
    const { status, json } = await list(query);
    expect(status).toBe(400);
    expect(json.error?.code).toBe('bad_request');
    expect(json.error?.message).toContain(named);
    expect(json.error?.message).not.toContain('\n');
  });

  it('refuses a cursor of another order, and takes text that is not UTF-8 as the characters it decodes to', async () => {
    for (const id of ['dev:other:run-a', 'dev:other:run-b']) await dev.store.createRun({ id, project: 'other', workflow: 'w.sh', interpreter: 'bash -eu', script: 'true' });
    const { json } = await list('project=other&limit=1&sort=duration');
    expect(json.next).not.toBeNull();
    const other = await list(`project=other&limit=1&sort=created&before=${json.next}`);
    expect(other.status).toBe(400);
    expect(other.json.error?.message).toMatch(/cursor of the order 'duration'/);
    const bytes = await list('q=%FF%FE');
    expect(bytes.status).toBeLessThan(500);
  });
});
