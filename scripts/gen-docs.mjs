#!/usr/bin/env node
// Writes the generated reference sections of docs/ (api.md's fields and answers, protocol.md's fields,
// limits.md's table) from the schemas and constants the code checks requests against
// (src/server/reference-docs.ts), so the documentation says what is enforced.
//
//   npm run gen:docs
//
// test/server/reference-docs.test.ts fails when a section is out of date. Reads the built dist/.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { REFERENCE_SECTIONS, withSection } = await import(join(ROOT, 'dist/server/reference-docs.js'));

for (const [file, name, render] of REFERENCE_SECTIONS) {
  const path = join(ROOT, file);
  const before = readFileSync(path, 'utf8');
  const after = withSection(before, name, render());
  if (after !== before) {
    writeFileSync(path, after);
    process.stdout.write(`wrote ${file} (${name})\n`);
  }
}
