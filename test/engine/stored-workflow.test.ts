import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pass, type PassHost } from '../../src/engine/pass.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';
import type { ScriptSource } from '../../src/store/types.js';

/**
 * PassHost.storedWorkflow: where workflows are stored by name (a cluster's Workflows), a call of a
 * name the pass has no file of starts that Workflow, read when the call is first made and kept with
 * the child; a name there is none of, or one the host refuses, is refused in one line taking no
 * position. Without the hook (locally), the client's own reason is the refusal.
 */
describe("a child named by a stored Workflow's name", () => {
  let store: Store;
  let runs = 0;
  const asked: string[] = [];
  const stored: Record<string, ScriptSource | { refusal: string }> = {
    tiny: { workflow: 'tiny.yaml', interpreter: 'graph', script: 'name: tiny\nnodes:\n  - id: hi\n    type: sleep\n    config: { duration: 1s }\n', cwd: null, runner: { image: 'x' } },
    locked: { refusal: 'it is not Ready: InvalidPipeline' },
  };
  const host = (withLookup: boolean): PassHost => ({
    now: () => new Date('2030-01-01T00:00:00Z'),
    capabilities: [],
    maxResultBytes: 1024 * 1024,
    env: 'k8s',
    notify: () => undefined,
    ...(withLookup
      ? {
          storedWorkflow: (project: string, name: string) => {
            asked.push(`${project}/${name}`);
            return Promise.resolve(stored[name] ?? null);
          },
        }
      : {}),
  });

  beforeAll(async () => {
    store = await openPgliteStore();
  });

  afterAll(async () => {
    await store.close();
  });

  async function pass(withLookup: boolean, runId?: string): Promise<Pass> {
    if (runId) return Pass.start(store, (await store.getRun(runId))!, host(withLookup));
    runs += 1;
    const { run } = await store.createRun({ id: `k8s:team:run-${String(runs).padStart(16, '0')}`, project: 'team', workflow: 'parent.sh', interpreter: 'bash -eu', script: '', input: null });
    return Pass.start(store, run, host(withLookup));
  }

  const unreadable = (workflow: string) => ({ verb: 'spawn' as const, workflow, script: '', unreadable: `spool spawn: cannot read ${workflow}: no such file` });

  it("given a name the pod has no file of, then the Workflow of that name in the run's namespace is the child's source, with its pod settings", async () => {
    const first = await pass(true);
    const answer = await first.handle(unreadable('tiny'));
    expect(answer).toMatchObject({ status: 'ok' });
    const childId = String((answer as { stdout: string }).stdout).trim();
    expect(asked).toContain('team/tiny');
    expect(await store.getRun(childId)).toMatchObject({ workflow: 'tiny.yaml', interpreter: 'graph', runner: { image: 'x' }, parentId: first.run.id });
    // A replay answers from the journal, whatever the store holds now: nothing is looked up again.
    asked.length = 0;
    delete stored.tiny;
    const again = await pass(true, first.run.id);
    expect(await again.handle(unreadable('tiny'))).toMatchObject({ status: 'ok', stdout: `${childId}\n`, replayed: true });
    expect(asked).toEqual([]);
  });

  it('given a name there is no Workflow of, or one the host refuses, then the call is refused in one line and takes no position', async () => {
    const refused = await pass(true);
    expect(await refused.handle(unreadable('nope'))).toMatchObject({
      status: 'error',
      kind: 'usage',
      message: 'spool spawn: cannot read nope: no such file, and there is no Workflow nope in namespace team',
    });
    expect(await refused.handle(unreadable('locked'))).toMatchObject({ status: 'error', kind: 'usage', message: 'spool spawn: Workflow locked: it is not Ready: InvalidPipeline' });
    expect(await store.readJournal(refused.run.id)).toEqual([]);
  });

  it("given no lookup (locally, where workflows are files), then the client's reason is the refusal", async () => {
    const local = await pass(false);
    expect(await local.handle(unreadable('tiny'))).toMatchObject({ status: 'error', kind: 'usage', message: 'spool spawn: cannot read tiny: no such file' });
  });
});
