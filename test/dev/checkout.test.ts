import { describe, expect, it } from 'vitest';
import { CHECKED_OUT, project } from '../support/checkout-project.js';
import { cli, finalLog, getRun, listRuns, submit, useDevServer } from '../support/dev.js';

/** `spool submit FILE --with DIR` to `spool dev`: the bundle is uploaded, and every pass checks it out. */

const dev = useDevServer();

describe('spool checkout under spool submit --with DIR', () => {
  it('given a project directory submitted with --with, when each pass checks out into an empty directory, then it gets the files beside the script, minus what .gitignore leaves out', async () => {
    const dir = project();

    const id = await submit(dev.url, dir, 'flow.sh', '--with', '.');
    const log = await finalLog(dev.url, id, 60_000);

    expect((await getRun(dev.url, id)).status).toBe('succeeded');
    expect(log.match(/^helper says hi$/gm)).toHaveLength(2);
    expect(log).toContain('pass 2 config: {"env":"prod"}');
    expect(log.match(CHECKED_OUT)).toHaveLength(2);
  }, 120_000);

  it('given --with a directory that is not there, then submit exits 2 in one line and no run is created', async () => {
    const dir = project();
    const before = (await listRuns(dev.url)).length;

    const { code, output } = await cli(dev.url, dir, ['submit', 'flow.sh', '--with', 'nowhere']);

    expect(output.trim()).toBe('spool: --with nowhere: no such directory');
    expect(code).toBe(2);
    expect(await listRuns(dev.url)).toHaveLength(before);
  }, 60_000);
});
