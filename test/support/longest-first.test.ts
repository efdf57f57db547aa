import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { LongestFirst } from './longest-first.js';

const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const known = Object.entries((JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as { seconds: Record<string, number> }).seconds);
/** A file of the suite as the sequencer sees it: its path and its project's root. */
const spec = (path: string): TestSpecification => ({ moduleId: `${root}/${path}`, project: { config: { root } } }) as unknown as TestSpecification;

describe('the suite starts its longest files first (test/durations.json)', () => {
  it('given files of known durations in any order, and a new one, then the new one comes first and the rest longest first', async () => {
    const [longest = '', next = '', shortest = ''] = [known[0], known[1], known.at(-1)].map((entry) => entry?.[0] ?? '');
    const sorted = await new LongestFirst({} as Vitest).sort([shortest, longest, 'test/new.test.ts', next].map(spec));
    expect(sorted.map((file) => file.moduleId.slice(root.length + 1))).toEqual(['test/new.test.ts', longest, next, shortest]);
  });
});
