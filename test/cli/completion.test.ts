import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/** `spool completion`: the script a shell sources, tried in a real bash. */
describe('spool completion', () => {
  const complete = (script: string, line: string[]): string => {
    const dir = tempDir();
    writeFiles(dir, { 'completion.bash': script });
    const words = line.map((word) => `'${word}'`).join(' ');
    return execFileSync('bash', ['-c', `source ${join(dir, 'completion.bash')}; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _spool; echo "\${COMPREPLY[*]}"`], { encoding: 'utf8' }).trim();
  };

  it('given bash, then it completes commands, in-script verbs, subcommands and flags', async () => {
    const { code, output } = await spool(['completion', 'bash'], { cwd: tempDir() });
    expect(code).toBe(0);
    expect(complete(output, ['spool', 'sta']).split(' ').sort()).toEqual(['state', 'status']);
    expect(complete(output, ['spool', 'schedule', 'tr'])).toBe('trigger');
    expect(complete(output, ['spool', 'schedule', 'su'])).toBe('suspend');
    expect(complete(output, ['spool', 'schedule', 're'])).toBe('resume');
    expect(complete(output, ['spool', 'activity', 'wait'])).toBe('wait wait-all');
    expect(complete(output, ['spool', 'logs', '--ti'])).toBe('--timestamps');
    expect(complete(output, ['spool', 'rep'])).toBe('replay');
    expect(complete(output, ['spool', 'replay', '--s']).split(' ')).toContain('--script');
  });

  it('given fish, then it names every command; given another shell, then one line and exit 2', async () => {
    const fish = await spool(['completion', 'fish'], { cwd: tempDir() });
    expect(fish.output).toContain("complete -c spool -n '__fish_use_subcommand' -a 'submit'");
    const other = await spool(['completion', 'tcsh'], { cwd: tempDir() });
    expect(other.code).toBe(2);
    expect(other.output).toBe("spool: spool completion takes bash, zsh or fish, not 'tcsh'\n");
  });
});
