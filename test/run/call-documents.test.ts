import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callsOf, recorded, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/**
 * Calling a document from a script (issue 30, item 3): `spool call FILE --input JSON` of a pipeline
 * runs it as a child and prints its outputs (the pipeline's top-level `outputs:`, docs/pipelines.md).
 */
const TINY = `name: tiny
jobs:
  one:
    steps:
      - name: say
        run: spool output set y "got \${{ input.x }}"
outputs:
  y: \${{ steps.one.output.y }}
  both: "\${{ input.x }} and \${{ steps.one.output.y }}"
`;

describe('spool call of a pipeline', () => {
  it("given tiny.yaml with outputs, when a script calls it with --input, then it prints the pipeline's outputs and the child run holds them", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'tiny.yaml': TINY, 'parent.sh': `set -e\nspool call tiny.yaml --input '{"x":"7"}'\n` });
    const result = await spool(['run', 'parent.sh', '--data-dir', `${dir}/data`], { cwd: dir });
    const { journal } = await recorded(`${dir}/data`, runIdOf(result.output));

    expect(result.code).toBe(0);
    expect(result.output).toMatch(/^\{"y":"got 7","both":"7 and got 7"\}$/m);
    expect(callsOf(journal)).toEqual(['call']);
    const child = journal.find((entry) => entry.kind === 'result')?.data as { status: string; outputs: Record<string, string> };
    expect(child).toMatchObject({ status: 'succeeded', outputs: { y: 'got 7', both: '7 and got 7' } });
  });
});

/** A graph whose one node is a script and whose output reads its input: `{"y": <input.x>}`. */
const TINY_YAML = ['nodes:', '  - id: one', '    type: script', '    config: { interpreter: bash, body: "true" }', 'outputs:', '  y: { $expr: input.x }', ''].join('\n');
const TINY_JSON = `${JSON.stringify({ nodes: [{ id: 'one', type: 'script', config: { interpreter: 'bash', body: 'true' } }], outputs: { y: { $expr: 'input.x' } } })}\n`;

describe('spool call and spool spawn of a document from a script', () => {
  it('given a graph in YAML and in JSON, when a script calls and spawns them, then each runs as a graph: call prints its outputs, spawn starts it and moves on', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      'tiny.yaml': TINY_YAML,
      'tiny.json': TINY_JSON,
      'main.sh': [
        `echo "yaml: $(spool call tiny.yaml --input '{"x":"7"}')"`,
        `echo "json: $(spool call tiny.json --input '{"x":"8"}')"`,
        `spool spawn tiny.json --input '{"x":"9"}' > spawned`,
        'echo "moved on"',
        '',
      ].join('\n'),
    });
    const result = await spool(['run', 'main.sh', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('yaml: {"y":"7"}');
    expect(result.output).toContain('json: {"y":"8"}');
    expect(result.output).toContain('moved on');
    const { journal } = await recorded(dataDir, runIdOf(result.output));
    expect(callsOf(journal)).toEqual(['call', 'call', 'spawn']);
    const children = journal.filter((entry) => entry.kind === 'call').map((entry) => String(entry.data.runId));
    for (const id of children) {
      const { run } = await recorded(dataDir, id);
      expect(run?.interpreter, id).toBe('graph');
    }
  });

  it('given a document that is neither a valid pipeline nor a valid graph, when a script calls it, then the call is refused with its line and column and takes no position', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      'bad.json': '{\n  "nodes": [ { "id": "a", "type": "teleport", "config": {} } ]\n}\n',
      'main.sh': 'spool call bad.json || echo "refused with $?"\nspool annotate after\n',
    });
    const result = await spool(['run', 'main.sh', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/spool call: bad\.json:2:\d+/);
    expect(result.output).toContain('refused with 2');
    const { journal } = await recorded(dataDir, runIdOf(result.output));
    expect(callsOf(journal)).toEqual(['annotate']);
  });
});

describe('spool call-graph from a script', () => {
  it('given a graph file, when a script calls it by name, then it runs as a child and prints its outputs; a file that is not a graph is refused, exit 2, with nothing recorded', async () => {
    const dir = tempDir();
    const dataDir = join(tempDir(), 'data');
    writeFiles(dir, {
      'tiny.json': TINY_JSON,
      'child.sh': 'true\n',
      'main.sh': [
        `echo "graph: $(spool call-graph tiny.json --input '{"x":"5"}')"`,
        'spool call-graph child.sh || echo "refused with $?"',
        // A bare name is a Workflow's on a cluster (docs/graphs.md); here it is a file there is not.
        'spool call-graph tiny || echo "tiny refused with $?"',
        '',
      ].join('\n'),
    });
    const result = await spool(['run', 'main.sh', '--data-dir', dataDir], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('graph: {"y":"5"}');
    expect(result.output).toMatch(/^spool call-graph: child\.sh is not a graph/m);
    expect(result.output).toContain('refused with 2');
    expect(result.output).toMatch(/^spool call-graph: cannot read tiny: no such file$/m);
    expect(result.output).toContain('tiny refused with 2');
    const { journal } = await recorded(dataDir, runIdOf(result.output));
    expect(callsOf(journal)).toEqual(['call']);
  });
});

describe('a refused call before a recorded one', () => {
  it('given a caught call of a missing file before a call of a file a step made, when the run replays in a new directory, then the first is refused again and the second gets its own recorded answer', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'parent.sh': [
        `spool step make -- sh -c 'printf "spool step c -- echo child-ran\\n" > child.sh'`,
        'spool call missing.sh > /dev/null 2>&1 || echo "pass $SPOOL_PASS: missing refused $?"',
        'echo "pass $SPOOL_PASS: child $(spool call child.sh 2>&1; echo "exit $?")"',
        'spool sleep 100ms',
        '',
      ].join('\n'),
    });
    const result = await spool(['run', 'parent.sh', '--fresh-dir', '--data-dir', `${dir}/data`], { cwd: dir });
    expect(result.code, result.output).toBe(0);
    // Pass 1 ends at the child; pass 2 has it, pass 3 replays it. Children share one journal name:
    // the refused call took no position, so the recorded call after it is not its own.
    for (const pass of [2, 3]) {
      expect(result.output).toContain(`pass ${pass}: missing refused 2`);
      expect(result.output).toMatch(new RegExp(`^pass ${pass}: child .*exit 0$`, 'm'));
    }
  }, 120_000);
});
