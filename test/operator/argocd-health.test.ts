import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The Argo CD health check for Runs (config/argocd), run by a real Lua 5.4 as Argo CD runs it: the
 * Run is the global `obj`, and the chunk returns `{status, message}`.
 */
const patch = parse(readFileSync(new URL('../../config/argocd/argocd-cm-patch.yaml', import.meta.url), 'utf8')) as { data: Record<string, string> };
const script = patch.data['resource.customizations.health.hyperspool.dev_Run'] ?? '';
const dir = mkdtempSync(join(tmpdir(), 'spool-argocd-'));
const scriptFile = join(dir, 'health.lua');
writeFileSync(scriptFile, script);

/** A JSON value as a Lua table constructor (strings, numbers, booleans, objects: what a Run's status holds). */
function lua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(lua).join(', ')}}`;
  return `{${Object.entries(value as Record<string, unknown>).map(([key, item]) => `[${JSON.stringify(key)}] = ${lua(item)}`).join(', ')}}`;
}

function healthOf(run: object): { status: string; message: string } {
  const out = execFileSync('lua5.4', ['-e', `obj = ${lua(run)}`, '-e', `local hs = dofile(${JSON.stringify(scriptFile)}); io.write(hs.status, '\\n', hs.message)`], { encoding: 'utf8' });
  const [status = '', message = ''] = out.split('\n');
  return { status, message };
}

describe('the Argo CD health check for Runs', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [{}, 'Progressing', 'Run is not picked up by the operator yet'],
    [{ status: { phase: 'Running' } }, 'Progressing', 'Run is Running'],
    [{ status: { phase: 'Waiting', awaiting: 'signal approve' } }, 'Progressing', 'Waiting for signal approve'],
    [{ status: { phase: 'Succeeded' } }, 'Healthy', 'Run succeeded'],
    [{ status: { phase: 'Failed', message: 'script exited 1' } }, 'Degraded', 'script exited 1'],
    [{ status: { phase: 'Cancelled' } }, 'Degraded', 'Run was cancelled'],
    [{ status: { phase: 'Sideways' } }, 'Unknown', 'Unknown phase Sideways'],
  ])('given a Run %j, then Argo CD sees %s', (run, status, message) => {
    expect(healthOf(run)).toEqual({ status, message });
  });
});
