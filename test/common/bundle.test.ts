import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFiles } from '../../src/common/bundle/files.js';
import { ignored, parseGitignore } from '../../src/common/bundle/gitignore.js';
import { END, fileHeader, padding, UstarReader } from '../../src/common/bundle/ustar.js';
import { removeTempDirs, tempDir } from '../support/spool.js';

afterAll(removeTempDirs);

describe('.gitignore rules of a checkout bundle', () => {
  it.each([
    ['*.log', 'a.log', false, true],
    ['*.log', 'deep/dir/a.log', false, true],
    ['*.log', 'a.logx', false, false],
    ['build/', 'build', true, true],
    ['build/', 'build', false, false],
    ['build/', 'src/build', true, true],
    ['/build', 'src/build', true, false],
    ['/build', 'build', false, true],
    ['docs/*.md', 'docs/a.md', false, true],
    ['docs/*.md', 'docs/sub/a.md', false, false],
    ['docs/**/*.md', 'docs/sub/x/a.md', false, true],
    ['**/cache', 'a/b/cache', true, true],
    ['a?c', 'abc', false, true],
    ['# comment', '# comment', false, false],
    ['*.log\n!keep.log', 'keep.log', false, false],
    ['\\#hash', '#hash', false, true],
  ])('%j on %s (directory: %s) ignores it: %s', (text, path, isDir, expected) => {
    expect(ignored(parseGitignore(text, ''), path, isDir)).toBe(expected);
  });

  it('given a .gitignore in a subdirectory, then its patterns apply below it only', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', '.gitignore'), '*.tmp\n');
    writeFileSync(join(dir, 'sub', 'a.tmp'), '');
    writeFileSync(join(dir, 'b.tmp'), '');

    expect(bundleFiles(dir).map((file) => file.path)).toEqual(['b.tmp', 'sub/.gitignore']);
  });
});

describe('the ustar archive of a checkout bundle', () => {
  it('given files written by fileHeader, then tar lists and extracts them, and UstarReader reads them back from chunks of any size', () => {
    const dir = tempDir();
    const long = `${'d'.repeat(120)}/${'f'.repeat(90)}.txt`;
    const files: [string, Buffer, boolean][] = [
      ['a.txt', Buffer.from('hello\n'), false],
      ['bin/run.sh', Buffer.from('#!/bin/sh\necho run\n'), true],
      ['empty', Buffer.alloc(0), false],
      [long, Buffer.alloc(1500, 7), false],
    ];
    const archive = Buffer.concat([
      ...files.flatMap(([path, data, executable]) => [fileHeader(path, data.length, executable), data, padding(data.length)]),
      END,
    ]);
    writeFileSync(join(dir, 'b.tar'), archive);

    expect(execFileSync('tar', ['-tf', 'b.tar'], { cwd: dir, encoding: 'utf8' }).trim().split('\n')).toEqual(files.map(([path]) => path));
    mkdirSync(join(dir, 'out'));
    execFileSync('tar', ['-xf', '../b.tar'], { cwd: join(dir, 'out') });
    expect(readFileSync(join(dir, 'out', 'bin/run.sh'), 'utf8')).toBe('#!/bin/sh\necho run\n');

    for (const size of [1, 7, 512, 100_000]) {
      const read: [string, Buffer, boolean][] = [];
      let current: Buffer[] = [];
      const reader = new UstarReader(
        (entry) => read.push([entry.path, Buffer.alloc(0), entry.executable]),
        (bytes) => current.push(Buffer.from(bytes)),
        () => {
          const last = read[read.length - 1];
          if (last) last[1] = Buffer.concat(current);
          current = [];
        },
      );
      for (let at = 0; at < archive.length; at += size) reader.push(archive.subarray(at, at + size));
      expect(read).toEqual(files);
      expect(reader.ended).toBe(true);
    }
  });
});
