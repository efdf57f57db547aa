import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { removeTempDirs, spool, startSpool, tempDir } from '../support/spool.js';

/**
 * `spool agent` as a pass's Job runs it starts on every cold pass's path (the script container waits
 * for its socket): it loads only the agent, not the control CLI, and readies Node's fetch for the
 * script's first ask before any is made (docs/benchmarks.md, "A cold pass on the node").
 */
describe('spool agent as a pass pod starts it', () => {
  afterAll(removeTempDirs);

  it('serves both sockets without loading commander or the control commands, and has fetch ready before the first request', async () => {
    const dir = tempDir('spool-agent-');
    writeFileSync(join(dir, 'token'), 'a token\n');
    // What the process loaded, written as it exits: CommonJS packages (commander, yaml) stay in
    // require's cache even when imported from ESM; Node's own modules (undici) in moduleLoadList.
    const loaded = join(dir, 'loaded.json');
    const recorder = join(dir, 'record-loads.cjs');
    writeFileSync(
      recorder,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loaded)}, JSON.stringify({ packages: Object.keys(require.cache), builtins: process.moduleLoadList })));\n`,
    );
    const agent = startSpool(['agent', '--socket', join(dir, 'agent.sock'), '--control', join(dir, 'control.sock')], {
      cwd: dir,
      // No server answers: the agent sends nothing until a script asks.
      env: { SPOOL_SERVER: 'http://127.0.0.1:9', SPOOL_RUN_ID: 'run-1', SPOOL_PASS: '1', SPOOL_TOKEN_FILE: join(dir, 'token'), NODE_OPTIONS: `--require ${recorder}` },
    });
    await eventually('the control socket', () => Promise.resolve(existsSync(join(dir, 'control.sock'))), 10_000, 10);
    // The warm-up starts in the same turn of the agent's event loop as the control socket's bind,
    // so before the signal is handled.
    process.kill(agent.pid, 'SIGTERM');
    const ended = await agent.done;
    expect(ended.code, ended.output).toBe(0);
    const { packages, builtins } = JSON.parse(readFileSync(loaded, 'utf8')) as { packages: string[]; builtins: string[] };
    expect(packages.filter((path) => /node_modules[\\/](commander|yaml)[\\/]/.test(path))).toEqual([]);
    expect(builtins).toContain('NativeModule internal/deps/undici/undici');
  });

  it('says in one line which variable is missing, exit 2', async () => {
    const dir = tempDir('spool-agent-');
    const result = await spool(['agent', '--socket', join(dir, 'a.sock'), '--control', join(dir, 'c.sock')], { cwd: dir, env: { SPOOL_SERVER: undefined } });
    expect(result.output).toBe('spool: SPOOL_SERVER is required\n');
    expect(result.code).toBe(2);
  });

  it('answers anything but the Job’s own call through the full CLI: its help, a missing option', async () => {
    const dir = tempDir('spool-agent-');
    const help = await spool(['agent', '--help'], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.output).toContain("serve a pass's spool socket in its pod");
    const missing = await spool(['agent', '--socket', join(dir, 'a.sock')], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/^spool: required option '--control <path>' not specified\n$/);
  });
});
