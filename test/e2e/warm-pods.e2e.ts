// Warm pass pods (a Workflow's spec.warmPods, docs/operator.md#warm-pass-pods) on a real node: the
// pods are made ahead from the runner image, their agents wait for an assignment, and a pass that
// comes due runs in one of them instead of a new pod.
//
//   npx vitest run --config test/e2e/vitest.config.ts test/e2e/warm-pods.e2e.ts
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, openNamespace, repo, sh, SYSTEM, untilPhase, type Cluster, type FileNamespace } from './support/cluster.js';

const SCRIPT = 'spool step a -- echo one\nspool wait signal go\nspool step b -- echo two\n';

interface RunResource {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { runId?: string; phase?: string; passes?: number; message?: string };
}

interface PodResource {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
  status?: { phase?: string; containerStatuses?: { name: string; ready?: boolean }[] };
}

describe('warm pass pods on a real node', () => {
  const namespace = `e2e-warm-${Date.now().toString(36)}`;
  let file: FileNamespace;
  let cluster: Cluster;

  const kubectl = (...args: string[]): Promise<string> => cluster.kubectl(...args);
  const getJson = <T>(...args: string[]): Promise<T> => cluster.getJson<T>(...args);
  const spool = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', file.userConfig, '-n', namespace]);
  const runOf = (run: string): Promise<RunResource> => getJson<RunResource>('-n', namespace, 'run', run);
  const whenRun = (run: string, phase: 'Waiting' | 'Succeeded', timeoutMs = 90_000): Promise<RunResource> =>
    untilPhase(run, () => runOf(run), phase, timeoutMs, () => cluster.operatorLogs());
  const podsWith = async (selector: string): Promise<PodResource[]> => (await getJson<{ items: PodResource[] }>('-n', namespace, 'pods', '-l', selector)).items;
  const jobOf = (pod: PodResource): string => pod.metadata.ownerReferences?.find((owner) => owner.kind === 'Job')?.name ?? '';
  /** The Workflow's idle warm pod once its containers run (its agent then asks for a pass); not `except`. */
  const readyIdlePod = (workflow: string, except: string[] = []): Promise<PodResource> =>
    eventually(
      `an idle warm pod of ${workflow} running`,
      async () =>
        (await podsWith(`hyperspool.dev/workflow=${workflow},hyperspool.dev/warm=idle`)).find(
          (pod) => !except.includes(pod.metadata.name) && pod.status?.phase === 'Running' && pod.status.containerStatuses?.every((status) => status.ready),
        ),
      120_000,
    );
  /** The Job the leader dispatched pass N of a Run to, from its `pass dispatched` log line (a suspended pass's pod is gone). */
  const dispatchedTo = (run: string, pass: number): Promise<string> =>
    eventually(`pass ${pass} of ${run} dispatched`, async () => {
      const logs = await kubectl('-n', SYSTEM, 'logs', '-l', 'app.kubernetes.io/component=operator', '--tail=-1');
      const line = logs.split('\n').find((each) => each.includes('"msg":"pass dispatched"') && each.includes(`"name":"${run}"`) && each.includes(`"pass":${pass},`));
      return line ? ((JSON.parse(line) as { job?: string }).job ?? '') : undefined;
    });
  /** The pod that ran (or runs) pass N of a run, by its labels. */
  const passPod = (key: string, pass: number): Promise<PodResource> =>
    eventually(`the pod of pass ${pass}`, async () => (await podsWith(`hyperspool.dev/run=${key},hyperspool.dev/pass=${pass}`))[0], 60_000);
  const workflow = (name: string, spec: object): Promise<void> =>
    cluster.apply({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name, namespace }, spec: { filename: `${name}.sh`, ...spec } });
  const startRun = async (name: string, of: string): Promise<string> => {
    await cluster.apply({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name, namespace }, spec: { workflowRef: { name: of } } });
    return eventually(`${name}'s key`, async () => (await runOf(name)).metadata.labels?.['hyperspool.dev/run']);
  };

  beforeAll(async () => {
    file = await openNamespace(namespace);
    cluster = file.cluster;
  });

  afterAll(async () => {
    await file?.close();
  });

  it('given a Workflow with warmPods 1, then a pass runs in the waiting pod and the pool refills; a waiting pod killed is replaced and the next pass runs in the new one; an assigned pod is refused another run’s journal; an edit drains the pool and the older run finishes on its own settings', async () => {
    await workflow('hot', { script: SCRIPT, env: [{ name: 'COLOUR', value: 'blue' }], warmPods: 1 });
    const first = await readyIdlePod('hot');
    await startRun('hot-1', 'hot');
    await whenRun('hot-1', 'Waiting');
    // Pass 1 ran in the warm pod: its Job is the warm one, not hot-1-p1.
    expect(await dispatchedTo('hot-1', 1)).toBe(jobOf(first));
    expect(jobOf(first)).toMatch(/^hot-warm-/);

    // The pool refilled; its pod, killed while it waits, is replaced, and no pass is lost: the
    // next pass runs in the replacement.
    const refill = await readyIdlePod('hot', [first.metadata.name]);
    await kubectl('-n', namespace, 'delete', 'pod', refill.metadata.name, '--wait=false');
    const replacement = await readyIdlePod('hot', [first.metadata.name, refill.metadata.name]);
    await spool('signal', 'hot-1', 'go');
    const done = await whenRun('hot-1', 'Succeeded');
    expect(done.status?.passes).toBe(2);
    expect(await dispatchedTo('hot-1', 2)).toBe(jobOf(replacement));
    expect(await spool('logs', 'hot-1')).toContain('two');

    // A pod assigned to one run holds that run's pass only: with its own token it reads its pass,
    // and is refused hot-1's.
    await workflow('held', { script: 'spool step hold -- sleep 30\n', warmPods: 1 });
    await readyIdlePod('held');
    const heldKey = await startRun('held-1', 'held');
    const held = await passPod(heldKey, 1);
    expect(jobOf(held)).toMatch(/^held-warm-/);
    const [heldRun, hotRun] = [(await runOf('held-1')).status?.runId ?? '', done.status?.runId ?? ''];
    const ask = (runId: string): Promise<string> =>
      kubectl('-n', namespace, 'exec', held.metadata.name, '-c', 'agent', '--', 'node', '-e',
        `fetch(process.env.SPOOL_SERVER + '/v1/agent/runs/' + encodeURIComponent(${JSON.stringify(runId)}) + '/passes/1', { headers: { authorization: 'Bearer ' + require('fs').readFileSync(process.env.SPOOL_TOKEN_FILE, 'utf8').trim() } }).then((r) => console.log(r.status))`);
    expect((await ask(heldRun)).trim()).toBe('200');
    expect((await ask(hotRun)).trim()).toBe('403');

    // An edit drains the pool; a run started before it finishes on what it started with.
    const inPool = await readyIdlePod('hot', [first.metadata.name, refill.metadata.name, replacement.metadata.name]);
    const before = inPool.metadata.labels?.['hyperspool.dev/definition'];
    await startRun('hot-2', 'hot');
    await whenRun('hot-2', 'Waiting');
    expect(await dispatchedTo('hot-2', 1)).toBe(jobOf(inPool));
    await kubectl('-n', namespace, 'patch', 'workflow', 'hot', '--type=merge', '-p', JSON.stringify({ spec: { env: [{ name: 'COLOUR', value: 'red' }] } }));
    await eventually(
      'the pool drained and refilled with the new settings',
      async () => {
        const idle = await podsWith('hyperspool.dev/workflow=hot,hyperspool.dev/warm=idle');
        return idle.length > 0 && idle.every((pod) => pod.metadata.labels?.['hyperspool.dev/definition'] !== before && pod.status?.phase === 'Running');
      },
      120_000,
    );
    await spool('signal', 'hot-2', 'go');
    await whenRun('hot-2', 'Succeeded');
    expect(await dispatchedTo('hot-2', 2)).toBe('hot-2-p2');
    expect(await kubectl('-n', namespace, 'get', 'job', 'hot-2-p2', '-o', 'jsonpath={.spec.template.spec.containers[0].env}')).toContain('blue');
  });
});
