import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { readFileSync } from 'node:fs';
import { removeTempDirs, tempDir } from '../support/spool.js';
import { agentOf, eventually, getRun, givenPodOf, givenUser, givenWorkflow, jobsOf, startCluster, untilPhase, type Cluster } from './support/cluster.js';

/**
 * A Run whose spec.rerunOf names another (docs/testing-workflows.md), against a real kube-apiserver
 * and PostgreSQL, the passes' pods played by the test: the operator copies the source run's journal
 * before the step as it admits the Run, so pass 1 replays step one and runs step two afresh.
 */
describe('Run.spec.rerunOf', () => {
  let cluster: Cluster;
  let operator: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-rerun');
    // One replica: a long lease, so a loaded machine's slow renewals do not hand its passes over mid-test.
    operator = await cluster.startLeader('op-rerun', { leaseDurationSeconds: 15 });
    await givenWorkflow(cluster, 'steps', 'steps.sh', 'spool step one -- date +%N\nspool step two -- date +%N\n[ -z "${NEVER:-}" ] || spool step three -- true\n');
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    removeTempDirs();
  });

  const listRunsLabelled = async (labelSelector: string) =>
    ((await cluster.custom.listNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'runs', labelSelector })) as { items: { metadata: { labels?: Record<string, string> }; spec: object }[] }).items;

  const createRun = (name: string, spec: Record<string, unknown>) =>
    cluster.custom.createNamespacedCustomObject({ group: 'hyperspool.dev', version: 'v1alpha1', namespace: cluster.namespace, plural: 'runs', body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { workflowRef: { name: 'steps' }, ...spec } } });

  /** The agent of pass 1 of a Run, its pod played here. */
  const firstPass = async (name: string) => {
    const key = await eventually(`${name}'s run key`, async () => (await getRun(cluster, name)).metadata.labels?.['hyperspool.dev/run']);
    const job = await eventually(`${name}'s Job`, async () => (await jobsOf(cluster, key))[0]);
    const runId = (await getRun(cluster, name)).status?.runId ?? '';
    return { runId, agent: agentOf(operator.url, runId, 1, (await givenPodOf(cluster, job)).token) };
  };

  it('given a run that ran steps one and two, when a Run reruns it from two, then one is replayed with its recorded stdout, two runs with another key, and the Run is labelled with its source', async () => {
    await createRun('first', {});
    const first = await firstPass('first');
    const one = await first.agent.call({ verb: 'step', name: 'one' });
    expect(one.body).toMatchObject({ status: 'execute' });
    await first.agent.call({ verb: 'done', position: one.body.position, stdout: 'one-first\n', exitCode: 0 });
    const two = await first.agent.call({ verb: 'step', name: 'two' });
    await first.agent.call({ verb: 'done', position: two.body.position, stdout: 'two-first\n', exitCode: 0 });
    expect((await first.agent.exit(0)).status).toBe(200);
    await untilPhase('Run first', () => getRun(cluster, 'first'), 'Succeeded');
    const before = await operator.store.readJournal(first.runId);

    await createRun('again', { rerunOf: { name: 'first', fromStep: 'two' } });
    const again = await firstPass('again');
    expect(again.runId).not.toBe(first.runId);
    expect((await getRun(cluster, 'again')).metadata.labels?.['hyperspool.dev/rerun-of']).toBe('first');
    // Runs made with kubectl are labelled with their Workflow too, as the runs the operator makes are.
    expect((await listRunsLabelled('hyperspool.dev/workflow=steps')).map((each) => (each.metadata as { name?: string }).name).sort()).toEqual(['again', 'first']);
    const copied = await operator.store.readJournal(again.runId);
    expect(copied.map(({ runId, ...entry }) => (void runId, entry))).toEqual(before.filter((entry) => entry.position < 1).map(({ runId, ...entry }) => (void runId, entry)));
    expect((await operator.store.getRun(again.runId))?.rerunOf).toEqual({ runId: first.runId, fromStep: 'two' });

    expect((await again.agent.call({ verb: 'step', name: 'one' })).body).toMatchObject({ status: 'ok', replayed: true, stdout: 'one-first\n' });
    const twoAgain = await again.agent.call({ verb: 'step', name: 'two' });
    expect(twoAgain.body).toMatchObject({ status: 'execute' });
    expect(twoAgain.body.idempotencyKey).toMatch(/^spool-/);
    expect(twoAgain.body.idempotencyKey).not.toBe(two.body.idempotencyKey);
    await again.agent.call({ verb: 'done', position: twoAgain.body.position, stdout: 'two-again\n', exitCode: 0 });
    expect((await again.agent.exit(0)).status).toBe(200);
    await untilPhase('Run again', () => getRun(cluster, 'again'), 'Succeeded');
    expect(await operator.store.readJournal(first.runId)).toEqual(before);
  }, 180_000);

  it('given a rerun through the API (the run page, spool ui), then the run it makes gets a Run that names its source in spec.rerunOf and a label', async () => {
    cluster.kubectl('apply', '-f', 'config/rbac/user_roles.yaml');
    const kubeconfig = JSON.parse(readFileSync(await givenUser(cluster, 'alice', 'hyperspool-edit', tempDir('spool-rerun-users-')), 'utf8')) as { users: { user: { token: string } }[] };
    const firstId = (await getRun(cluster, 'first')).status?.runId ?? '';
    const answer = await fetch(`${operator.url}/v1/runs/${encodeURIComponent(firstId)}/rerun`, {
      method: 'POST',
      headers: { authorization: `Bearer ${kubeconfig.users[0]?.user.token ?? ''}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fromStep: 'two' }),
    });
    expect(answer.status).toBe(201);
    const { run } = (await answer.json()) as { run: { id: string; rerunOf: unknown } };
    expect(run.rerunOf).toEqual({ runId: firstId, fromStep: 'two' });
    const key = run.id.slice(run.id.lastIndexOf(':') + 1);
    const resource = await eventually('its Run resource', async () => (await listRunsLabelled(`hyperspool.dev/run=${key}`))[0]);
    expect(resource.spec).toMatchObject({ workflowRef: { name: 'steps' }, rerunOf: { name: 'first', fromStep: 'two' } });
    expect(resource.metadata.labels?.['hyperspool.dev/rerun-of']).toBe('first');
  }, 120_000);

  it('given a rerun from a step the run never reached, or of a Run that is not there, then the Run fails saying why, and no run is admitted for it', async () => {
    await createRun('never', { rerunOf: { name: 'first', fromStep: 'three' } });
    const never = await untilPhase('Run never', () => getRun(cluster, 'never'), 'Failed');
    expect(never.status?.message).toContain("step 'three' never ran in");
    await createRun('orphan', { rerunOf: { name: 'nothing-here' } });
    const orphan = await untilPhase('Run orphan', () => getRun(cluster, 'orphan'), 'Failed');
    expect(orphan.status?.message).toContain('spec.rerunOf names nothing-here');
    for (const run of [never, orphan]) expect(await operator.store.getRun(run.status?.runId ?? '')).toBeNull();
  }, 120_000);
});
