import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * The package as users get it: `npm pack`, then the tarball installed into an empty directory.
 * Its install step builds the native client where Go is on PATH; without Go, scripts get the Node
 * client, and either way `npx spool run` works.
 */
const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..', '..');

afterAll(removeTempDirs);

/** PATH without the directories that hold a `go` command: a machine with no Go toolchain. */
function pathWithoutGo(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => {
      try {
        return !readdirSync(dir).includes('go');
      } catch {
        return true;
      }
    })
    .join(delimiter);
}

describe('the packed package, installed into an empty directory', () => {
  let tarball = '';

  beforeAll(async () => {
    const out = tempDir('spool-pack-');
    // dist/ is built by `npm test` before the tests; packing must not rebuild it under other tests.
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: REPO, maxBuffer: 64 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(out, packed?.filename ?? '');
    const files = (packed?.files ?? []).map((file) => file.path);
    // What the tarball must hold, and not hold: a binary built on the packer's machine.
    expect(files).toEqual(expect.arrayContaining(['bin/spool', 'dist/cli/main.js', 'sdk/go/go.mod', 'sdk/go/cmd/spool/main.go', 'sdk/python/src/hyperspool/__init__.py', 'dist/sdk/node_modules/@hyperspool/sdk/dist/index.js', 'dist/store/pglite-snapshot.tar.gz', 'dist/store/pglite-snapshot.json']));
    expect(files.filter((file) => file.startsWith('dist/native/') || file.endsWith('_test.go'))).toEqual([]);
  }, 300_000);

  async function installed(path: string): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
    const dir = tempDir('spool-install-');
    writeFiles(dir, { 'package.json': '{"name":"trying-hyperspool","private":true}' });
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: path };
    for (const name of ['SPOOL_CLIENT', 'SPOOL_SOCKET', 'NODE_OPTIONS', 'PYTHONPATH']) delete env[name];
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    return { dir, env };
  }

  async function spoolRunsThere(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
    writeFiles(dir, { 'hello.sh': 'spool step greet -- echo "hello from $(spool state get who || true)"\nspool sleep 1s\nspool step after -- echo after the sleep\n' });
    const hello = await run('npx', ['spool', 'run', 'hello.sh'], { cwd: dir, env });
    expect(hello.stdout).toBe('hello from \nafter the sleep\n');
    // The new data directory started from the shipped snapshot (initdb would have said why it ran).
    expect(hello.stderr).not.toContain('ready-made embedded data directory');
    // The README's example, from the installed package: it fails as the seed's saga does.
    const saga = await run('npx', ['spool', 'run', 'node_modules/hyperspool/examples/saga.sh'], { cwd: dir, env }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(saga.code).toBe(1);
    expect(saga.stdout).toBe('cancelled HT-2207\ncancelled FL-881\n');
    expect(saga.stderr).toContain('no cars left\n');
  }

  it('where Go is on PATH, then its install builds the native client, and scripts get it', async () => {
    const { dir, env } = await installed(process.env.PATH ?? '');
    const { stdout } = await run('npx', ['spool', 'doctor'], { cwd: dir, env });
    expect(stdout).toMatch(/^in-script client: native \(built from sdk\/go by this install\)$/m);
    await spoolRunsThere(dir, env);
  }, 300_000);

  it('where Go is not, then the install still succeeds, and scripts get the Node client', async () => {
    const { dir, env } = await installed(pathWithoutGo());
    const { stdout } = await run('npx', ['spool', 'doctor'], { cwd: dir, env });
    expect(stdout).toMatch(/^in-script client: Node \(no native client for linux-x64/m);
    await spoolRunsThere(dir, env);
  }, 300_000);
});
