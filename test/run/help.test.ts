import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inScriptHelp } from '../../src/cli/script/parse.js';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/** Runs under both clients (SPOOL_CLIENT): each must print the same in-script help. */
describe('spool --help inside a script', () => {
  it('given SPOOL_SOCKET is set, then --help, -h and help list the in-script verbs, not the control commands, and record nothing', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    writeFiles(dir, { 'help.sh': 'spool --help > long.txt\nspool -h > short.txt\nspool help > word.txt\n' });

    const result = await spool(['run', 'help.sh', '--data-dir', dataDir], { cwd: dir });

    expect(result.code, result.output).toBe(0);
    const help = readFileSync(join(dir, 'long.txt'), 'utf8');
    expect(help).toBe(inScriptHelp());
    for (const verb of ['step', 'sleep', 'wait signal', 'lock', 'state get', 'activity submit', 'event emit', 'spawn', 'call', 'call-node', 'call-graph', 'output set', 'annotate', 'artifact put', 'checkout'])
      expect(help).toContain(`\n  spool ${verb} `.trimEnd());
    expect(help).not.toMatch(/Commands:|^ {2}(spool )?(submit|runs|dev) /m); // the control CLI's help
    expect(readFileSync(join(dir, 'short.txt'), 'utf8')).toBe(help);
    expect(readFileSync(join(dir, 'word.txt'), 'utf8')).toBe(help);
    expect(callsOf((await recorded(dataDir, runIdOf(result.output))).journal)).toEqual([]);
  }, 120_000);
});
