import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, finalLog, freePort, logOf, startDevProcess, submit, waitForRun, type DevProcess } from '../../../test/support/dev.js';
import { processesMentioning, removeTempDirs, scriptCopies, tempDir } from '../../../test/support/spool.js';
import { requireBuiltSdk } from './scripts.js';

/**
 * The seed's preview environment in TypeScript, `examples/preview.mjs` itself, submitted to a
 * `spool dev` process from the repository's root as a person would, with `@hyperspool/sdk` resolved
 * by the pass (nothing installed).
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let dev: DevProcess;

beforeAll(async () => {
  requireBuiltSdk();
  dev = await startDevProcess(join(tempDir('spool-sdk-ts-dev-'), 'data'), await freePort());
}, 90_000);

afterAll(async () => {
  dev?.child.kill('SIGTERM');
  await dev?.exited;
  removeTempDirs();
});

/** The processes running this run's copy of preview.mjs. */
function previewProcesses(): number[] {
  return processesMentioning(scriptCopies(ROOT)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('preview.mjs');
    } catch {
      return false;
    }
  });
}

/**
 * The log's lines without the SDK's suspension note, which the agent's signal may beat: it ends the
 * script's process group as it answers `suspended`.
 */
function withoutSuspension(log: string): string[] {
  return log.split('\n').filter((line) => line !== '' && !line.startsWith('spool: script suspended awaiting'));
}

describe('examples/preview.mjs under spool dev', () => {
  it('given the preview workflow, when it waits for pr.closed and the event comes, then deploy ran once, no process waited, and teardown got the recorded env', async () => {
    const id = await submit(dev.url, ROOT, 'examples/preview.mjs');

    const waiting = await waitForRun(dev.url, id, ['waiting'], 60_000);
    expect(waiting.awaiting).toBe('event pr.closed');
    expect(withoutSuspension(await logOf(dev.url, id))).toEqual(['deploying a preview to pr-7.preview.example']);
    expect(previewProcesses()).toEqual([]);

    await cliOk(dev.url, ROOT, ['event', 'emit', 'pr.closed', '--payload', '{"pr":7}']);
    const log = await finalLog(dev.url, id, 60_000);
    const run = await waitForRun(dev.url, id);
    expect(run.status).toBe('succeeded');
    expect(run.passes).toBe(2);
    // deploy did not run again on the second pass; teardown got its recorded value.
    expect(withoutSuspension(log)).toEqual(['deploying a preview to pr-7.preview.example', 'tearing down https://pr-7.preview.example']);

    const journal = JSON.parse(await cliOk(dev.url, ROOT, ['journal', id, '--json'])) as {
      position: number;
      kind: string;
      verb: string;
      name: string;
      data: Record<string, unknown>;
    }[];
    const results = journal.filter((entry) => entry.kind === 'result');
    expect(results.map(({ verb, name }) => `${verb} ${name}`)).toEqual(['step_fn deploy', 'wait.event pr.closed', 'step_fn teardown']);
    expect(results[0]?.data).toMatchObject({ value: { host: 'pr-7.preview.example', url: 'https://pr-7.preview.example' } });
    expect(results[2]?.data).toMatchObject({ value: null });
  }, 180_000);
});
