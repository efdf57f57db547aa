import { afterAll, describe, expect, it } from 'vitest';
import { ARTIFACT_MIB, ARTIFACT_WORKFLOW } from '../support/artifact-workflow.js';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { callsOf, killScripts, recorded, removeTempDirs, runIdOf, spool, startSpool, tempDir, waitFor, withStore, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

describe('artifacts under spool run (PGlite)', () => {
  it(`given a bash workflow that puts a ${ARTIFACT_MIB} MiB file and sleeps, when the next pass gets it back, then its sha256 matches and the replayed put uploaded nothing`, async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, { 'build.sh': ARTIFACT_WORKFLOW });

    const { code, output } = await spool(['run', 'build.sh', '--data-dir', dataDir], { cwd: dir });

    expect(output).toMatch(/sha256 matches on pass 2: [0-9a-f]{64}/);
    expect(output).toMatch(new RegExp(`build\\.bin\\t${ARTIFACT_MIB * 1024 * 1024}\\t[0-9a-f]{64}\\tapplication/octet-stream`));
    expect(code).toBe(0);
    const runId = runIdOf(output);
    const { run, journal } = await recorded(dataDir, runId);
    expect(run?.passes).toBe(2);
    expect(callsOf(journal)).toEqual(['step sha', 'artifact.put build.bin', 'sleep']);
    const put = journal.find((entry) => entry.kind === 'result' && entry.verb === 'artifact.put');
    const sha = journal.find((entry) => entry.kind === 'result' && entry.name === 'sha')?.data.stdout;
    expect(put?.data).toEqual({ size: ARTIFACT_MIB * 1024 * 1024, sha256: String(sha).trim(), contentType: 'application/octet-stream' });
    const artifacts = await withStore(dataDir, (store) => store.artifacts.list(runId));
    // Stored by pass 1, in 512 KiB parts; pass 2 (which put a file of zeros under that name) added none.
    expect(artifacts.map((each) => [each.name, each.blobKey, each.parts])).toEqual([['build.bin', `${runId}/1/1/`, ARTIFACT_MIB * 2]]);
    expect(await withStore(dataDir, (store) => store.artifacts.blobs.readPart(`${runId}/1/2/`, 0))).toBeNull();
  }, 240_000);

  it('given artifacts put from a file and from stdin, when the script lists and gets them, then list and list --json describe them and get - writes to stdout', async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, {
      'report.json': '{"ok":true}\n',
      'small.sh': `set -e
spool artifact put report.json report.json
printf 'from stdin' | spool artifact put notes/log.txt - --type text/x-log
printf '' | spool artifact put empty -
spool artifact list --json
spool artifact get notes/log.txt -; echo
spool artifact get notes/log.txt
cat log.txt; echo
spool artifact get empty empty.out && wc -c < empty.out
`,
    });

    const { code, output } = await spool(['run', 'small.sh', '--data-dir', dataDir], { cwd: dir });

    expect(code).toBe(0);
    const listed = JSON.parse(/^\[.*\]$/m.exec(output)?.[0] ?? '[]') as { name: string; size: number; contentType: string }[];
    expect(listed.map(({ name, size, contentType }) => [name, size, contentType])).toEqual([
      ['report.json', 12, 'application/json'],
      ['notes/log.txt', 10, 'text/x-log'],
      ['empty', 0, 'application/octet-stream'],
    ]);
    expect(output.match(/^from stdin$/gm)).toHaveLength(2);
    expect(output).toMatch(/^0$/m);
  }, 120_000);
});

describe('a runner that dies mid-put', () => {
  it('given the runner and the script were SIGKILLed half-way through a put from stdin, when resumed, then the put runs again from the start and the parts the dead pass left are deleted', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    // While slow.marker exists, stdin stops after 1.6 MB and stays open: the client has sent the first parts and waits for more.
    writeFiles(dir, {
      'slow.marker': '',
      'put.sh': `if [ -e slow.marker ]; then
  { head -c 1600000 /dev/zero; echo > started.txt; sleep 60; } | spool artifact put big -
else
  head -c 1600000 /dev/zero | spool artifact put big -
fi
spool artifact list
`,
    });

    const runner = startSpool(['run', 'put.sh', '--data-dir', dataDir], { cwd: dir });
    await waitFor('the put to be half-way', () => existsSync(join(dir, 'started.txt')));
    process.kill(runner.pid, 'SIGKILL');
    killScripts(dir);
    const id = runIdOf((await runner.done).output);
    const left = await withStore(dataDir, (store) => store.artifacts.blobs.readPart(`${id}/0/1/`, 0));
    rmSync(join(dir, 'slow.marker'));
    const resumed = await spool(['resume', id, '--data-dir', dataDir], { cwd: dir });

    expect(left?.length).toBe(512 * 1024);
    expect(resumed.code).toBe(0);
    expect(resumed.output).toMatch(/^big\t1600000\t[0-9a-f]{64}\tapplication\/octet-stream$/m);
    const artifacts = await withStore(dataDir, (store) => store.artifacts.list(id));
    expect(artifacts.map((each) => [each.blobKey, each.size])).toEqual([[`${id}/0/2/`, 1_600_000]]);
    expect(await withStore(dataDir, (store) => store.artifacts.blobs.readPart(`${id}/0/1/`, 0))).toBeNull();
  }, 180_000);
});

describe('artifact refusals: one clear line, nothing recorded', () => {
  it('given no artifact of that name, when a script gets it, then it exits 2 naming the name and what the run has; a missing FILE to put exits 2 and records nothing', async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, {
      'a.sh': `set +e
echo x > x.txt
spool artifact put x.txt x.txt
spool artifact get nope out.bin
echo "exit $?"
spool artifact put y missing.bin
echo "exit $?"
`,
    });

    const { output } = await spool(['run', 'a.sh', '--data-dir', dataDir], { cwd: dir });

    expect(output).toContain("no artifact 'nope' in this run (it has 'x.txt')\nexit 2");
    expect(output).toContain('spool artifact put: cannot read missing.bin: no such file\nexit 2');
    expect(callsOf((await recorded(dataDir, runIdOf(output))).journal)).toEqual(['artifact.put x.txt']);
  }, 120_000);

  it.each([
    ['a file', 'head -c 3000 /dev/zero > big.bin; spool artifact put big big.bin'],
    ['stdin', 'head -c 3000 /dev/zero | spool artifact put big -'],
  ])('given SPOOL_MAX_ARTIFACT_BYTES=2000, when a script puts 3000 bytes from %s, then it exits 1 saying so and nothing is recorded', async (_, put) => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, { 'a.sh': `set +e\n${put}\necho "exit $?"\nspool step after -- echo after\n` });

    const { output, code } = await spool(['run', 'a.sh', '--data-dir', dataDir], { cwd: dir, env: { SPOOL_MAX_ARTIFACT_BYTES: '2000' } });

    expect(output).toContain("artifact 'big' is over the 2000-byte limit for one artifact (SPOOL_MAX_ARTIFACT_BYTES); nothing was stored\nexit 1");
    expect(code).toBe(0);
    const runId = runIdOf(output);
    const { journal } = await recorded(dataDir, runId);
    // The refused put took no position: the next call is the journal's first.
    expect(callsOf(journal)).toEqual(['step after']);
    expect(journal[0]?.position).toBe(0);
    expect(await withStore(dataDir, (store) => store.artifacts.list(runId))).toEqual([]);
  }, 120_000);

  it('given SPOOL_MAX_RUN_ARTIFACT_BYTES=5000, when a run puts 3000 bytes twice, then the second put fails naming the run limit', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'a.sh': `set +e\nhead -c 3000 /dev/zero > a.bin\nspool artifact put one a.bin\nspool artifact put two a.bin\necho "exit $?"\n` });

    const { output } = await spool(['run', 'a.sh', '--data-dir', `${dir}/data`], { cwd: dir, env: { SPOOL_MAX_RUN_ARTIFACT_BYTES: '5000' } });

    expect(output).toContain("artifact 'two' would bring this run's artifacts to 6000 bytes, over the 5000-byte limit for a run (SPOOL_MAX_RUN_ARTIFACT_BYTES)");
    expect(output).toContain('exit 1');
  }, 120_000);

  it('given a run of another project, when a script gets its artifact with --run, then it is refused in one line; a run of its own project is read', async () => {
    const dir = tempDir();
    const dataDir = `${dir}/data`;
    writeFiles(dir, {
      'make.sh': 'echo secret > s.txt\nspool artifact put s.txt s.txt\n',
    });
    const other = runIdOf((await spool(['run', 'make.sh', '--data-dir', dataDir, '--project', 'team-b'], { cwd: dir })).output);
    const same = runIdOf((await spool(['run', 'make.sh', '--data-dir', dataDir], { cwd: dir })).output);
    const read = async (runId: string): Promise<string> => {
      writeFiles(dir, { 'read.sh': `set +e\nspool artifact get s.txt - --run '${runId}'\necho "exit $?"\n` });
      return (await spool(['run', 'read.sh', '--data-dir', dataDir], { cwd: dir })).output;
    };

    expect(await read(other)).toContain(
      `run ${other} is in project 'team-b', and this run (project 'default') may read the artifacts of runs in its own project only\nexit 2`,
    );
    expect(await read(same)).toContain('secret\nexit 0');
    expect(await read('dev:default:run-nosuchrun0000000')).toContain("no run 'dev:default:run-nosuchrun0000000'\nexit 2");
  }, 180_000);
});
