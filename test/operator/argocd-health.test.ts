import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { pinnedKubectl } from '../support/kube.js';

/**
 * config/argocd as Argo CD gets it: the Component merged by kustomize into an existing argocd-cm.
 * What the scripts answer is tested in Argo CD's own Lua VM, by test/argocd (Go, from .ci/run).
 */
const REPO = join(import.meta.dirname, '..', '..');
const CHECKS = join(REPO, 'config', 'argocd', 'resource_customizations', 'hyperspool.dev');

describe('config/argocd', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-argocd-'));
  let kubectl: string;

  beforeAll(async () => {
    kubectl = await pinnedKubectl();
  }, 900_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('given the kustomization that installs Argo CD, when it includes config/argocd, then argocd-cm keeps its keys and gains a health check with open libraries for each kind, each the health.lua of the upstream layout', () => {
    writeFileSync(join(dir, 'argocd-cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n  url: https://argocd.example.com\n');
    writeFileSync(join(dir, 'kustomization.yaml'), `resources: [argocd-cm.yaml]\ncomponents: [${relative(dir, join(REPO, 'config', 'argocd'))}]\n`);
    const built = parse(execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' })) as { metadata: { name: string; namespace: string }; data: Record<string, string> };
    expect(built.metadata).toEqual({ name: 'argocd-cm', namespace: 'argocd' });

    const kinds = readdirSync(CHECKS).sort();
    expect(kinds).toEqual(['Handler', 'Run', 'Schedule', 'Workflow']);
    expect(Object.keys(built.data).sort()).toEqual(
      ['url', ...kinds.flatMap((kind) => [`resource.customizations.health.hyperspool.dev_${kind}`, `resource.customizations.useOpenLibs.hyperspool.dev_${kind}`])].sort(),
    );
    expect(built.data.url).toBe('https://argocd.example.com');
    for (const kind of kinds) {
      expect(built.data[`resource.customizations.health.hyperspool.dev_${kind}`], kind).toBe(readFileSync(join(CHECKS, kind, 'health.lua'), 'utf8'));
      expect(built.data[`resource.customizations.useOpenLibs.hyperspool.dev_${kind}`], kind).toBe('true');
      // The upstream layout: a test case file for every input named in health_test.yaml.
      const cases = parse(readFileSync(join(CHECKS, kind, 'health_test.yaml'), 'utf8')) as { tests: { inputPath: string }[] };
      expect(cases.tests.map((c) => c.inputPath).sort(), kind).toEqual(readdirSync(join(CHECKS, kind, 'testdata')).map((file) => `testdata/${file}`).sort());
    }
  });
});
