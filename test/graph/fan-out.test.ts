import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';
import { startKeyServer } from './key-server.js';

let server: Awaited<ReturnType<typeof startKeyServer>>;
beforeAll(async () => {
  server = await startKeyServer();
});
afterAll(async () => {
  await server.close();
  removeTempDirs();
});

describe('a fan_out of http items with max_parallel and a rate', () => {
  it('given five items, max_parallel 2 and a rate of 5/1s, then never more than two are under way, starts are at least 200ms apart, and the outputs are in item order', async () => {
    // The first item is answered last, so the items end out of order; the others are quick, so the
    // rate, not max_parallel, holds each start back (0, 200, 400, 600 and 800 ms).
    const items = [700, 50, 50, 50, 50].map((ms, i) => `${server.url}/fan?ms=${ms}&item=${i}`);
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      'fan.json': JSON.stringify({
        nodes: [
          {
            id: 'fan',
            type: 'http',
            fan_out: { items, max_parallel: 2, rate: '5/1s' },
            config: { method: 'POST', url: { $expr: 'item' }, body: { $expr: 'index' }, headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } },
          },
        ],
        outputs: { bodies: { $expr: 'nodes.fan.output' } },
      }),
    });
    const result = await spool(['run', 'fan.json', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    const id = runIdOf(result.output);

    expect(server.keys('/fan').size).toBe(5);
    expect(server.maxInFlight).toBeLessThanOrEqual(2);
    const { run, journal } = await recorded(dataDir, id);
    const outputs = JSON.parse(run?.outputs.bodies ?? '[]') as { status: number; body: { body: string } }[];
    expect(outputs.map((output) => output.body.body)).toEqual(['0', '1', '2', '3', '4']);

    const names = journal.filter((entry) => entry.kind === 'call').map((entry) => entry.name);
    expect(names).toEqual(['node fan[0]', 'node fan[1]', 'node fan[2]', 'node fan[3]', 'node fan[4]', 'bodies']);
    // Each item's start is when its request reached the server. Not its call's record: that is
    // written with its result, or 250 ms on for a longer call, by a timer, and two such timers
    // fired late together on a loaded machine (2 ms apart, 2026-12-06).
    const arrivals = server.received.filter((entry) => entry.path === '/fan');
    const starts = ['0', '1', '2', '3', '4'].map((index) => arrivals.find((entry) => entry.body === index)?.at ?? 0);
    const gaps = starts.slice(1).map((start, i) => start - (starts[i] ?? 0));
    // 200 ms apart at least; 160 leaves room for each request's own way to the server. The first
    // request of a process also pays for its connection (30-120 ms on a loaded machine), which the
    // second does not: that gap may come shorter by as much (a rate not kept made it 2-4 ms).
    expect(gaps[0], `${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(50);
    for (const gap of gaps.slice(1)) expect(gap, `${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(160);
  });
});
