import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeyServer } from '../graph/key-server.js';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

let server: Awaited<ReturnType<typeof startKeyServer>>;
beforeAll(async () => {
  server = await startKeyServer();
});
afterAll(async () => {
  await server.close();
  removeTempDirs();
});

/** The seed's charge node's config, as a script passes it to `spool call-node http --config`. */
const charge = (url: string) => JSON.stringify({ method: 'POST', url, headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } });

describe('spool call-node from a script', () => {
  it('given two http call-nodes around a sleep, when the run replays in a new directory, then each is sent once, with its own key, and the replay prints the recorded output', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      'main.sh': [
        `echo "first: $(spool call-node http --config '${charge(`${server.url}/charge`)}')"`,
        'spool sleep 500ms',
        // The same node name again: its key comes from the call's place in the journal, not the name.
        `echo "second: $(spool call-node http --config '${charge(`${server.url}/charge`)}')"`,
        `spool call-node http --name lookup --config '{"url":"${server.url}/missing"}' || echo "missing failed with $?"`,
        '',
      ].join('\n'),
    });
    const result = await spool(['run', 'main.sh', '--fresh-dir', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    const keys = server.keys('/charge');
    // Two calls, two keys, each sent once although the first was reached again on the second pass.
    expect([...keys.values()]).toEqual([1, 1]);
    const [first, second] = [...keys.keys()];
    expect(first).not.toBe(second);
    const firsts = [...result.output.matchAll(/^first: (.*)$/gm)].map((match) => JSON.parse(match[1] ?? '') as { status: number; body: { key: string; seen: number } });
    expect(firsts).toHaveLength(2);
    expect(firsts.map((output) => [output.status, output.body.key, output.body.seen])).toEqual([
      [200, first, 1],
      [200, first, 1],
    ]);
    expect(result.output).toMatch(/^second: \{"status":200,/m);
    expect(result.output).toMatch(/^spool call-node: GET http:\/\/127\.0\.0\.1:\d+\/missing answered 404$/m);
    expect(result.output).toContain('missing failed with 1');
    const { journal } = await recorded(dataDir, runIdOf(result.output));
    expect(callsOf(journal)).toEqual(['step_fn node http', 'sleep', 'step_fn node http', 'step_fn node lookup']);
  });

  it('given a config the node kind does not take, when a script calls it, then it is refused in one line, exit 2, and nothing is recorded', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      'main.sh': [`spool call-node http --config '{"method":"POST"}' || echo "refused with $?"`, `spool call-node teleport --config '{}' || echo "refused with $?"`, 'spool annotate after', ''].join('\n'),
    });
    const result = await spool(['run', 'main.sh', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    expect(result.output.match(/refused with 2/g)).toHaveLength(2);
    expect(result.output).toMatch(/^spool call-node: .*url/m);
    const { journal } = await recorded(dataDir, runIdOf(result.output));
    expect(callsOf(journal)).toEqual(['annotate']);
  });
});
