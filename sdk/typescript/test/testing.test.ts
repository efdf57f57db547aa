import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertPassed, runCase, runCases, SpoolTestError, type Case } from '../src/testing.js';
import { removeTempDirs, tempDir } from '../../../test/support/spool.js';
import { requireBuiltSdk } from './scripts.js';

/**
 * @hyperspool/sdk/testing against the real `spool test` (the repository's built CLI): a workflow
 * written with this SDK (workflows/trial.mjs: a stubbed step, a 14-day sleep, a week's wait for a
 * signal) on the virtual clock.
 */

beforeAll(requireBuiltSdk);
afterAll(removeTempDirs);

const TRIAL = fileURLToPath(new URL('workflows/trial.mjs', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(root, 'bin', 'spool');
const DAY = 86_400_000;

const upgrade: Case = {
  name: 'upgrades in the third week',
  signals: [{ at: 15 * DAY, name: 'upgrade', payload: 'pro' }],
  stubs: { steps: { charge: { stdout: 'rcpt-1\n' } } },
  expect: { outputs: { plan: 'pro', receipt: 'rcpt-1' }, steps: ['charge'], time: '15d' },
};

describe('@hyperspool/sdk/testing', () => {
  it('is what the built package exports as @hyperspool/sdk/testing', () => {
    // From beside the copy the build stages (dist/sdk/node_modules), as a user's test imports it.
    const names = execFileSync(process.execPath, ['--input-type=module', '-e', "console.log(Object.keys(await import('@hyperspool/sdk/testing')).join(' '))"], {
      cwd: join(root, 'dist', 'sdk'),
      encoding: 'utf8',
    });
    expect(names.trim().split(' ').sort()).toEqual(['SpoolTestError', 'assertPassed', 'caseReport', 'runCase', 'runCases']);
  });

  it('runs the workflow’s own test file, and both of its cases pass', async () => {
    const results = await runCases(TRIAL, undefined, { cli });
    for (const result of results) assertPassed(result);
    expect(results.map((result) => result.case)).toEqual(['upgrades in the third week', 'stays free when no upgrade comes']);
    expect(results[1]).toMatchObject({ virtualMs: 21 * DAY, outputs: { receipt: 'rcpt-2', plan: 'free' } });
  });

  it('passes a case built here, and reports the same case with one expectation changed as failed, saying which', async () => {
    const wrong: Case = { ...upgrade, name: 'expects enterprise', expect: { ...upgrade.expect, outputs: { plan: 'enterprise' } } };
    const [passing, failing] = await runCases(TRIAL, [upgrade, wrong], { cli });
    assertPassed(passing!);
    expect(passing).toMatchObject({ outcome: 'succeeded', virtualMs: 15 * DAY });
    expect(passing!.journal!.filter((entry) => entry.kind === 'call').map((entry) => [entry.verb, entry.name])).toEqual([
      ['step', 'charge'],
      ['sleep', ''],
      ['wait.signal', 'upgrade'],
      ['output.set', 'receipt'],
      ['output.set', 'plan'],
    ]);
    expect(failing!.passed).toBe(false);
    expect(failing!.failures).toEqual(['expected output plan to be "enterprise", but it was "pro"']);
    expect(() => assertPassed(failing!)).toThrow(/expected output plan to be "enterprise", but it was "pro"[^]*wait\.signal +upgrade/);
  });

  it('rejects a case the CLI refuses with its one line', async () => {
    await expect(runCase(TRIAL, { expect: { outcom: 'succeeded' } as never }, { cli })).rejects.toThrow(
      new SpoolTestError("spool: --case: case 'case 1': expect: unknown key 'outcom' (known: outcome, error, outputs, steps, state, time, runs, log)"),
    );
  });

  it('runs each pass in a new, empty directory with freshDir', async () => {
    // Pass 1 records its working directory; pass 2, after the sleep, says whether it runs in the same one.
    const workflow = join(tempDir('spool-sdk-ts-fresh-'), 'where.sh');
    writeFileSync(workflow, 'first=$(spool step where -- pwd)\nspool sleep 1d\nspool output set dir "$([ "$first" = "$(pwd)" ] && echo same || echo new)"\n');
    assertPassed(await runCase(workflow, { expect: { outputs: { dir: 'new' } } }, { cli, freshDir: true }));
  });
});
