import { describe, expect, it } from 'vitest';
import { journalView } from '../../src/engine/journal-view.js';
import type { JournalEntry } from '../../src/store/types.js';

const entry = (verb: string, kind: 'call' | 'result', data: Record<string, unknown>): JournalEntry => ({
  runId: 'r',
  position: 0,
  kind,
  verb,
  name: 'charge',
  occurrence: 0,
  data,
});

describe('the journal as the API shows it', () => {
  it("shows a step_fn's recorded JSON text as its value, keys in order, and leaves other entries alone", () => {
    const [fn, step] = journalView([entry('step_fn', 'result', { json: '{"zeta":1,"alpha":[true,null]}' }), entry('step', 'result', { stdout: 'x\n', exitCode: 0 })]);
    expect(JSON.stringify(fn?.data)).toBe('{"value":{"zeta":1,"alpha":[true,null]}}');
    expect(step?.data).toEqual({ stdout: 'x\n', exitCode: 0 });
  });
});
