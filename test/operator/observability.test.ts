import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/common/json-log.js';
import type { Operator } from '../../src/operator/operator.js';
import { untilPhase, agentOf, eventually, getRun, givenPodOf, givenWorkflow, jobsOf, startCluster, whenJobEnds, whenRunCreated, type Cluster } from './support/cluster.js';

/** The JSON lines an operator logged, parsed (a line that is not JSON fails the test). */
function logSink(): { lines: Record<string, unknown>[]; write: (line: string) => void } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) };
}

const scrape = async (operator: Operator): Promise<string> => (await fetch(`${operator.healthUrl}/metrics`)).text();

describe('what the operator says: JSON log lines and metrics by namespace', () => {
  let cluster: Cluster;
  const logs = { a: logSink(), b: logSink() };
  let a: Operator;
  let b: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-o');
    // On all interfaces, as in its pod: the log says so, not the loopback URL tests use.
    a = await cluster.startOperator('op-a', { host: '0.0.0.0', log: jsonLogger(logs.a.write) });
    await eventually('op-a to lead', () => Promise.resolve(a.isLeader()));
    b = await cluster.startOperator('op-b', { log: jsonLogger(logs.b.write) });
    await givenWorkflow(cluster, 'flaky', 'flaky.sh', 'spool step charge -- false\n');
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('given a replica starting, then its first lines say what it did to the database and the addresses it really listens on, and the leader says it gained the lease', () => {
    // Both share one new database: one migrated it, and the other found it up to date.
    expect([logs.a.lines[0]?.msg, logs.b.lines[0]?.msg].sort()).toEqual(['database migrated', 'database schema up to date']);
    const [, first] = logs.a.lines;
    expect(first).toMatchObject({ level: 'info', msg: 'listening', replica: 'op-a', api: `0.0.0.0:${new URL(a.url).port}`, probes: `0.0.0.0:${new URL(a.healthUrl).port}` });
    expect(first?.aggregated).toMatch(/^0\.0\.0\.0:\d+$/);
    expect(a.listening).toEqual({ api: first?.api, probes: first?.probes, aggregated: first?.aggregated });
    expect(Date.parse(String(first?.time))).toBeGreaterThan(0);
    expect(logs.b.lines[1]).toMatchObject({ msg: 'listening', replica: 'op-b', api: `127.0.0.1:${new URL(b.url).port}` });
    expect(logs.a.lines).toContainEqual(expect.objectContaining({ msg: 'leadership gained', kind: 'Lease', namespace: 'hyperspool-system', name: 'hyperspool-operator' }));
    expect(logs.b.lines.map((line) => line.msg)).not.toContain('leadership gained');
  });

  it('given a run that fails, then a line for its pass dispatched and one for the run finished, naming it; the counters carry its namespace', async () => {
    await whenRunCreated(cluster, 'flaky-1', 'flaky');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'flaky-1')).metadata.labels?.['hyperspool.dev/run']);
    const [job] = await eventually('the pass-1 Job', async () => {
      const jobs = await jobsOf(cluster, key);
      return jobs.length > 0 && jobs;
    });
    const runId = (await getRun(cluster, 'flaky-1')).status?.runId ?? '';
    const { token } = await givenPodOf(cluster, job!);
    const agent = agentOf(a.url, runId, 1, token);
    const step = await agent.call({ verb: 'step', name: 'charge' });
    await agent.call({ verb: 'done', position: step.body.position, stdout: '', exitCode: 1 });
    await agent.exit(1);
    await whenJobEnds(cluster, job!, 'Failed');
    await untilPhase('run flaky-1', () => getRun(cluster, 'flaky-1'), 'Failed');

    expect(logs.a.lines).toContainEqual(
      expect.objectContaining({ level: 'info', msg: 'pass dispatched', kind: 'Run', namespace: 'team-o', name: 'flaky-1', runId, pass: 1, job: `flaky-1-p1` }),
    );
    const finished = await eventually('the run finished line', () => Promise.resolve(logs.a.lines.find((line) => line.msg === 'run finished')));
    expect(finished).toMatchObject({ kind: 'Run', namespace: 'team-o', name: 'flaky-1', runId, phase: 'failed', passes: 1, message: 'script exited 1' });
    expect(finished.seconds).toEqual(expect.any(Number));

    const leader = await eventually('the phase gauge', async () => {
      const text = await scrape(a);
      return text.includes('hyperspool_runs{namespace="team-o",phase="Failed"} 1') && text;
    });
    expect(leader).toContain('hyperspool_runs{namespace="team-o",phase="Running"} 0');
    expect(leader).toContain('hyperspool_runs_failed_total{namespace="team-o"} 1');
    expect(leader).toContain('hyperspool_passes_started_total{namespace="team-o"} 1');
    // What only the leader knows, the follower does not pretend to: no series at all.
    const follower = await scrape(b);
    expect(follower).not.toMatch(/^hyperspool_runs\{/m);
    expect(follower).not.toMatch(/^hyperspool_passes_started_total\{/m);
    expect(follower).toMatch(/^hyperspool_queue_depth 0$/m);
  });

  it('given a reconcile the API server refuses, then an error line names the object, and the error counter its kind and namespace', async () => {
    // An admission policy refuses the operator's status writes to this one Run, as a cluster's
    // own policy might: the reconcile fails and is retried with backoff.
    await givenPolicyRefusingStatusOf(cluster, 'doomed-');
    await whenRunCreated(cluster, 'doomed-1', 'flaky');
    const line = await eventually('a reconcile error line', () =>
      Promise.resolve(logs.a.lines.find((entry) => entry.msg === 'reconcile failed' && entry.name === 'doomed-1')),
    );
    expect(line).toMatchObject({ level: 'error', kind: 'Run', namespace: 'team-o', name: 'doomed-1', replica: 'op-a' });
    expect(String(line.error)).toContain('refused by policy');
    const text = await scrape(a);
    expect(Number(/^hyperspool_reconcile_errors_total\{kind="Run",namespace="team-o",reason="\w+"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('given reconciles of several endings, then /metrics counts them by kind and result, and the informers\' lists by kind and reason', async () => {
    // A Run whose Workflow is not there yet waits Pending and asks to be looked at again (requeue);
    // a Schedule whose cron does not parse says so in Ready and is not retried (terminal).
    await whenRunCreated(cluster, 'orphan-1', 'not-yet');
    await untilPhase('run orphan-1', () => getRun(cluster, 'orphan-1'), 'Pending');
    await cluster.custom.createNamespacedCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      namespace: 'team-o',
      plural: 'schedules',
      body: { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Schedule', metadata: { name: 'bad-cron' }, spec: { cron: '61 * * * *', workflowRef: { name: 'flaky' } } },
    });
    const counted = (text: string, series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    const text = await eventually('requeue and terminal counted', async () => {
      const scraped = await scrape(a);
      return counted(scraped, 'hyperspool_reconciles_total{kind="Run",result="requeue"}') >= 1 && counted(scraped, 'hyperspool_reconciles_total{kind="Schedule",result="terminal"}') >= 1 && scraped;
    });
    // The failed run of the test before ended its reconciles in success; the refused status writes in error.
    expect(counted(text, 'hyperspool_reconciles_total{kind="Run",result="success"}')).toBeGreaterThanOrEqual(1);
    expect(counted(text, 'hyperspool_reconciles_total{kind="Run",result="error"}')).toBeGreaterThanOrEqual(1);
    // Every informer listed once as it started.
    for (const kind of ['Run', 'Workflow', 'Handler', 'Schedule', 'ActivityClass', 'Pod', 'Job']) {
      expect(counted(text, `hyperspool_informer_relists_total{kind="${kind}",reason="start"}`)).toBe(1);
    }
    expect(text).toMatch(/^# TYPE hyperspool_informer_relists_total counter$/m);
  });

  it('given the leader stepping down, then it says it lost the lease and the other replica says it gained it', async () => {
    await a.close();
    expect(logs.a.lines).toContainEqual(expect.objectContaining({ msg: 'leadership lost', replica: 'op-a' }));
    await eventually('op-b to lead', () => Promise.resolve(b.isLeader()), 15_000);
    expect(logs.b.lines).toContainEqual(expect.objectContaining({ msg: 'leadership gained', replica: 'op-b' }));
  });
});

/**
 * A ValidatingAdmissionPolicy (and its binding) refusing every write to the status of the Runs
 * whose names start with `prefix`; back once the API server enforces it.
 */
async function givenPolicyRefusingStatusOf(cluster: Cluster, prefix: string): Promise<void> {
  const admission = cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: 'refuse-run-status' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['hyperspool.dev'], apiVersions: ['*'], operations: ['UPDATE'], resources: ['runs/status'] }] },
        validations: [{ expression: `!object.metadata.name.startsWith('${prefix}')`, message: 'refused by policy' }],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: { metadata: { name: 'refuse-run-status' }, spec: { policyName: 'refuse-run-status', validationActions: ['Deny'] } },
  });
  // The API server starts enforcing a new policy a moment later: a probe Run's status write tells when.
  const probe = `${prefix}probe`;
  await whenRunCreated(cluster, probe, 'no-such-workflow');
  await eventually('the policy enforced', () => {
    try {
      cluster.kubectl('patch', 'run', probe, '-n', cluster.namespace, '--subresource=status', '--type=merge', '-p', '{"status":{"runId":"x","phase":"Pending","message":"probe"}}');
      return Promise.resolve(false);
    } catch (error) {
      return Promise.resolve(String((error as { stderr?: string }).stderr).includes('refused by policy'));
    }
  });
}
