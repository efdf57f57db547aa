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
