import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

describe("a graph's script, call, wait and approval nodes", () => {
  it('given a script node, a call of a file and a wait that times out, then each is a durable call of the run and the outputs read what each gave', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      // $SPOOL_INPUT_FILE holds the run's envelope: {"run": ..., "input": ...}.
      'child.sh': `n="$(sed 's/.*"input":\\([0-9]*\\).*/\\1/' "$SPOOL_INPUT_FILE")"\nspool output set doubled "$(( n * 2 ))"\n`,
      'graph.yaml': [
        'name: kinds',
        'input:',
        '  n: { default: 21 }',
        'nodes:',
        '  - id: count',
        '    type: script',
        '    config:',
        '      interpreter: bash',
        '      body: |',
        `        spool output set n "$(sed 's/.*"n":\\([0-9]*\\).*/\\1/' "$SPOOL_INPUT_FILE")"`,
        '  - id: child',
        '    type: call',
        '    depends_on: [count]',
        '    config: { workflow: child.sh, input: { $expr: nodes.count.output.n } }',
        '  - id: hook',
        '    type: wait',
        '    depends_on: [child]',
        '    config: { signal: go, timeout: 1s }',
        'outputs:',
        '  n: { $expr: nodes.count.output.n }',
        '  doubled: { $expr: nodes.child.output.doubled }',
        '  hook_timed_out: { $expr: nodes.hook.output.timed_out }',
        '',
      ].join('\n'),
    });
    const result = await spool(['run', 'graph.yaml', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    const { run, journal } = await recorded(dataDir, runIdOf(result.output));
    expect(run?.outputs).toEqual({ n: '21', doubled: '42', hook_timed_out: 'true' });
    expect(callsOf(journal)).toEqual(['call', 'call', 'wait.signal go', 'output.set n', 'output.set doubled', 'output.set hook_timed_out']);
    // The children are the graph's own, named for their nodes, as a pipeline's jobs are.
    const children = (journal.filter((entry) => entry.kind === 'call' && entry.verb === 'call').map((entry) => entry.data.workflow));
    expect(children).toEqual(['graph.yaml#count', 'graph.yaml#child']);
  });

  it('given an approval node, then it is the gate a pipeline has: spool run stops at it and says how to answer it', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, { 'gate.json': '{ "nodes": [ { "id": "ok", "type": "approval", "config": { "prompt": { "$expr": "input.what" }, "timeout": "1h" } } ] }\n' });
    const result = await spool(['run', 'gate.json', '--data-dir', dataDir, '--input', '{"what":"ship it?"}'], { cwd: dir });
    const id = runIdOf(result.output);
    expect(result.code).toBe(75);
    expect(result.output).toContain(`waiting for approval at 'ok', which spool run cannot take: start spool dev here (it carries on this run), then spool approve ${id} ok`);
    const { journal } = await recorded(dataDir, id);
    const gate = journal.find((entry) => entry.kind === 'call' && entry.verb === 'call');
    expect(gate?.data.workflow).toBe('gate.json#ok');
  });

  it('given a malformed graph, then spool run exits 2 with one line saying where, and records nothing', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, { 'bad.json': '{ "nodes": [{ "id": "a", "type": "smtp", "config": {} }] }\n' });
    const result = await spool(['run', 'bad.json', '--data-dir', dataDir], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.output).toBe("spool: bad.json:1:34: 'type' must be one of http, script, call, approval, wait, sleep\n");
    expect(existsSync(dataDir)).toBe(false);
  });
});
