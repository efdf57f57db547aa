import { HttpMethod, KubeConfig, type RequestContext, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import {
  untilPhase,
  GaveUp,
  agentOf,
  eventually,
  getRun,
  givenPodOf,
  givenWorkflow,
  jobsOf,
  startCluster,
  whenJobFinishes,
  watchJobsCreated,
  whenRunCreated,
  type Cluster,
} from './support/cluster.js';

const LEASE_SECONDS = 3;
const SCRIPT = 'spool step a -- echo one\n';

describe('operator replicas and a restarting kube-apiserver', () => {
  let cluster: Cluster;
  let jobWatch: Awaited<ReturnType<typeof watchJobsCreated>>;

  beforeAll(async () => {
    cluster = await startCluster('team-r');
    await givenWorkflow(cluster, 'one', 'one.sh', SCRIPT);
    // Every Job ever created in the namespace, deleted ones too.
    jobWatch = await watchJobsCreated(cluster);
  }, 180_000);

  afterAll(async () => {
    await jobWatch?.stop();
    await cluster?.stop();
  });

  /** Plays a pass's pod to the end of SCRIPT: step a runs (or replays) and the script exits 0. */
  async function whenPassRunsToTheEnd(operator: Operator, runId: string, job: V1Job): Promise<void> {
    const pass = Number(job.metadata?.labels?.['hyperspool.dev/pass']);
    const { token } = await givenPodOf(cluster, job);
    const agent = agentOf(operator.url, runId, pass, token);
    const step = await agent.call({ verb: 'step', name: 'a' });
    if (step.body.status === 'execute') await agent.call({ verb: 'done', position: step.body.position, stdout: 'one\n', exitCode: 0 });
    expect((await agent.exit(0)).status).toBe(200);
    await whenJobFinishes(cluster, job);
  }

  it('given two replicas, then only the leader reconciles; killing it hands over within the lease time and no pass gets a second Job', async () => {
    const first = await cluster.startOperator('op-a', { leaseDurationSeconds: LEASE_SECONDS });
    const second = await cluster.startOperator('op-b', { leaseDurationSeconds: LEASE_SECONDS });
    const leader = await eventually('a leader', () => Promise.resolve([first, second].find((operator) => operator.isLeader())));
    const follower = leader === first ? second : first;
    expect(follower.isLeader()).toBe(false);
    expect(await (await fetch(`${follower.healthUrl}/metrics`)).text()).toMatch(/^hyperspool_is_leader 0$/m);
    expect(await (await fetch(`${leader.healthUrl}/metrics`)).text()).toMatch(/^hyperspool_is_leader 1$/m);
    // Both replicas are ready and serve the API; only the leader starts passes.
    for (const operator of [leader, follower]) await eventually('ready', async () => (await fetch(`${operator.healthUrl}/readyz`)).status === 200);

    await whenRunCreated(cluster, 'one-1', 'one');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'one-1')).metadata.labels?.['hyperspool.dev/run']);
    const runId = (await eventually('the run id', async () => (await getRun(cluster, 'one-1')).status?.runId)) ?? '';
    await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key)).length > 0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(jobWatch.names).toEqual([`one-1-p1`]);
    expect(await (await fetch(`${follower.healthUrl}/metrics`)).text()).not.toMatch(/^hyperspool_passes_started_total\{/m);

    // The leader dies in the middle of pass 1: its pod's calls have nobody to answer them.
    const killedAt = Date.now();
    await leader.kill();
    await eventually('the follower to lead', () => Promise.resolve(follower.isLeader()), 10_000);
    expect(Date.now() - killedAt).toBeLessThan(LEASE_SECONDS * 1000 + 2000);

    // The new leader replays the run as pass 2; pass 1's Job, whose pod nobody hosts, is ended.
    const pass2 = await eventually('the pass-2 Job', async () => (await jobsOf(cluster, key)).find((job) => job.metadata?.name === `one-1-p2`));
    await eventually('pass 1 Job deleted', async () => (await jobsOf(cluster, key)).every((job) => job.metadata?.name !== `one-1-p1`));
    await whenPassRunsToTheEnd(follower, runId, pass2);
    const done = await eventually('phase Succeeded', async () => {
      const run = await getRun(cluster, 'one-1');
      return run.status?.phase === 'Succeeded' && run;
    });
    expect(done.status?.passes).toBe(2);
    expect(jobWatch.names).toEqual([`one-1-p1`, `one-1-p2`]);
    // Why it took a pass more says itself on the Run (kubectl describe run).
    const events = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace, fieldSelector: 'involvedObject.name=one-1' });
    expect(events.items.filter((event) => event.reason === 'PassLost').map((event) => `${event.type}: ${event.message}`)).toEqual([
      'Warning: pass 1 lost: the operator replica that ran it stopped leading',
    ]);
    await follower.close();
  });

  it('given the API server resetting the connection of the first Job creations, then the pass waits it out: the run gets its Job and finishes, not Failed "pass could not start"', async () => {
    const kubeConfig = new JobCreatesReset(2);
    // As the operator, with its ServiceAccount's token (support/cluster.ts), not admin.
    kubeConfig.loadFromFile(cluster.operatorKubeconfigPath);
    const operator = await cluster.startLeader('op-d', { leaseDurationSeconds: LEASE_SECONDS, kubeConfig });

    await whenRunCreated(cluster, 'one-reset', 'one');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'one-reset')).metadata.labels?.['hyperspool.dev/run'], 30_000);
    const job = await eventually('the pass-1 Job', async () => {
      const run = await getRun(cluster, 'one-reset');
      if (run.status?.phase === 'Failed') throw new GaveUp(`one-reset failed: ${run.status.message}`);
      return (await jobsOf(cluster, key))[0];
    }, 30_000);
    expect(kubeConfig.resets).toBe(2);
    await whenPassRunsToTheEnd(operator, (await getRun(cluster, 'one-reset')).status?.runId ?? '', job);
    const done = await eventually('one-reset Succeeded', async () => {
      const run = await getRun(cluster, 'one-reset');
      return run.status?.phase === 'Succeeded' && run;
    });
    expect(done.status?.passes).toBe(1);
    await operator.close();
  });

  it('given a running operator, when kube-apiserver restarts, then its informers catch up: a Run created after the restart gets its Job and finishes', async () => {
    const operator = await cluster.startOperator('op-c', { leaseDurationSeconds: LEASE_SECONDS });
    await eventually('op-c to lead', () => Promise.resolve(operator.isLeader()), 15_000);

    await cluster.plane.restartApiServer();
    await whenRunCreated(cluster, 'one-after', 'one');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'one-after')).metadata.labels?.['hyperspool.dev/run'], 30_000);
    const job = await eventually('the pass-1 Job', async () => (await jobsOf(cluster, key))[0], 30_000);
    const runId = (await getRun(cluster, 'one-after')).status?.runId ?? '';
    // The restart may have cost the Lease; whoever leads now hosts the pass.
    await eventually('a leader again', () => Promise.resolve(operator.isLeader()), 15_000);
    const current = await eventually('the pass to be hosted', async () => {
      const latest = (await jobsOf(cluster, key)).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '')).pop();
      return latest ?? job;
    });
    await whenPassRunsToTheEnd(operator, runId, current);
    await untilPhase('run one-after', () => getRun(cluster, 'one-after'), 'Succeeded', 30_000);
  });
});

/**
 * The operator's credentials, with the first `count` Job creations failing as a connection reset
 * by a restarting API server fails them (client-node's FetchError): the request never arrives.
 */
class JobCreatesReset extends KubeConfig {
  resets = 0;

  constructor(private readonly count: number) {
    super();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const creatingJob = context.getHttpMethod() === HttpMethod.POST && /\/apis\/batch\/v1\/namespaces\/[^/]+\/jobs$/.test(context.getUrl().split('?')[0] ?? '');
    if (creatingJob && this.resets < this.count) {
      this.resets += 1;
      throw Object.assign(new Error(`request to ${context.getUrl()} failed, reason: read ECONNRESET`), { name: 'FetchError', code: 'ECONNRESET' });
    }
    await super.applySecurityAuthentication(context);
  }
}
