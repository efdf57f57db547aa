import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorded, removeTempDirs, runIdOf, spool, tempDir, withStore, writeFiles } from '../support/spool.js';
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
    // The first item is answered last, so the items end out of order.
    const items = [1500, 800, 800, 800, 800].map((ms, i) => `${server.url}/fan?ms=${ms}&item=${i}`);
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

    // Each item's start is its call's record, written when the runner let it start.
    const names = journal.filter((entry) => entry.kind === 'call').map((entry) => entry.name);
    expect(names).toEqual(['node fan[0]', 'node fan[1]', 'node fan[2]', 'node fan[3]', 'node fan[4]', 'bodies']);
    const times = await withStore(dataDir, (store) => store.readJournalTimes(id));
    const starts = [0, 1, 2, 3, 4].map((position) => times.find((time) => time.position === position && time.kind === 'call')?.at.getTime() ?? 0);
    // 200ms apart at least; 160 leaves room for the store's own time to write each record.
    for (let i = 1; i < starts.length; i++) expect((starts[i] ?? 0) - (starts[i - 1] ?? 0)).toBeGreaterThanOrEqual(160);
  });
});
