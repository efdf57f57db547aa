import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each test file took in a whole run (scripts/test-durations.mjs writes it from the JSON report). */
const durations = (JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as { seconds: Record<string, number> }).seconds;

/**
 * Runs the files that took longest last time first, whatever their project. Vitest's own order on
 * a fresh clone (CI's: no cache of last run's times) is by project, then by file size, so a short
 * file of slow tests (the replay verifier, five minutes) starts near the end and one worker runs
 * it alone for minutes while the other has nothing left. Longest first leaves only short files to
 * even out the end. Files not in durations.json (new ones) go first, as vitest runs unknown first.
 */
export class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification): number => durations[relative(file.project.config.root, file.moduleId)] ?? Infinity;
    return Promise.resolve([...files].sort((a, b) => seconds(b) - seconds(a)));
  }
}
