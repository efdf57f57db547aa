import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { OUTPUT, generate, readCrds } from '../../scripts/gen-api.mjs';
import { GROUP, KINDS, SCHEMAS, VERSION, type OpenApiSchema } from '../../src/operator/api/generated.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('src/operator/api/generated.ts', () => {
  test('is what scripts/gen-api.mjs makes of crds/ (run `npm run gen:api` after changing a CRD)', async () => {
    const fresh = await generate(repo);
    const onDisk = readFileSync(join(repo, OUTPUT), 'utf8');
    expect(onDisk === fresh, 'generated.ts is out of date with crds/: run `npm run gen:api`').toBe(true);
  });

  test('has each kind with its group, version, plural and schema', () => {
    expect(GROUP).toBe('hyperspool.dev');
    expect(VERSION).toBe('v1alpha1');
    expect(Object.values(KINDS).map(({ kind, plural }) => `${kind}/${plural}`)).toEqual([
      'ActivityClass/activityclasses',
      'Handler/handlers',
      'Run/runs',
      'Schedule/schedules',
      'Workflow/workflows',
    ]);
    for (const crd of readCrds(repo)) expect(SCHEMAS[crd.names.kind as keyof typeof SCHEMAS]).toEqual(crd.schema);
  });
});

describe('crds/', () => {
  const crds = readCrds(repo);

  test('every kind but ActivityClass is namespaced with the status subresource; all in category spool, with short names', () => {
    for (const crd of crds) {
      const raw = readFileSync(join(repo, crd.file), 'utf8');
      expect(crd.group, crd.file).toBe('hyperspool.dev');
      expect(crd.names.categories, crd.file).toEqual(['spool']);
      expect(crd.names.shortNames?.length, crd.file).toBe(1);
      // An ActivityClass is an admin's, once for the cluster, and nobody reports on it.
      if (crd.names.kind === 'ActivityClass') {
        expect(crd.scope, crd.file).toBe('Cluster');
        expect(raw, crd.file).not.toMatch(/subresources:/);
        continue;
      }
      expect(crd.scope, crd.file).toBe('Namespaced');
      expect(raw, crd.file).toMatch(/subresources:\n\s+status: \{\}/);
    }
  });

  test('every field has a description (kubectl explain shows them), and no schema has a default', () => {
    const problems: string[] = [];
    const visit = (schema: OpenApiSchema, path: string, root: boolean): void => {
      if ('default' in schema) problems.push(`${path}: has a default`);
      for (const [field, child] of Object.entries(schema.properties ?? {})) {
        // Root metadata may not say anything but its type: the API server refuses the CRD otherwise.
        if (root && field === 'metadata') continue;
        if (!child.description) problems.push(`${path}.${field}: no description`);
        visit(child, `${path}.${field}`, false);
      }
      // A map's values (resource quantities, node labels) are fields kubectl explain shows too.
      if (typeof schema.additionalProperties === 'object') {
        if (!schema.additionalProperties.description) problems.push(`${path}{}: no description`);
        visit(schema.additionalProperties, `${path}{}`, false);
      }
      if (schema.items) {
        if (!schema.items.description) problems.push(`${path}[]: no description`);
        visit(schema.items, `${path}[]`, false);
      }
    };
    for (const crd of crds) visit(crd.schema, crd.names.kind, true);
    expect(problems).toEqual([]);
  });
});
