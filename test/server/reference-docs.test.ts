import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REFERENCE_SECTIONS, describeSchema, withSection } from '../../src/server/reference-docs.js';

/** docs/ says what the server and the agent enforce: its reference sections are written from their schemas. */
describe('the generated reference sections of docs/', () => {
  it.each(REFERENCE_SECTIONS)(
    '%s (%s) is what the schemas say (run `npm run gen:docs` after changing one)',
    (file, name, render) => {
      const onDisk = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
      expect(withSection(onDisk, name, render()) === onDisk, `${file} is out of date: run npm run gen:docs`).toBe(true);
    },
  );

  it('describes a field in a few words', () => {
    expect(describeSchema({ type: 'integer', minimum: 1, maximum: 100 })).toBe('integer 1–100');
    expect(describeSchema({ anyOf: [{ type: 'string', maxLength: 5 }, { type: 'null' }] })).toBe(
      'string ≤ 5 chars or null',
    );
    expect(describeSchema({ enum: ['approve', 'reject'] })).toBe('`"approve"`, `"reject"`');
  });
});
