import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import { runTraceId } from '../../src/tracing/trace-ids.js';
import { startJaeger, type JaegerSpan, type TestJaeger } from '../support/jaeger.js';
import { agentOf, eventually, getRun, givenPodOf, givenWorkflow, jobsOf, startCluster, untilPhase, whenJobEnds, whenRunCreated, type Cluster } from './support/cluster.js';

/**
 * The operator's traces (docs/tracing.md) in a real Jaeger, with the operator on a real
 * kube-apiserver: its reconciles as spans of their own, and a pass whose calls come from a pod's
 * agent as a trace of the run, the step's span the one the agent was told to put in TRACEPARENT.
 */
describe('the operator traces its reconciles and the passes it hosts', () => {
  let jaeger: TestJaeger;
  let cluster: Cluster;
  let operator: Operator;
  const saved = { ...process.env };

  beforeAll(async () => {
    jaeger = await startJaeger();
    // The operator runs in this process: tracing reads this process's OTEL_* variables.
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: '100' });
    delete process.env.OTEL_SERVICE_NAME;
    delete process.env.OTEL_SDK_DISABLED;
    cluster = await startCluster('team-t');
    operator = await cluster.startOperator('op-t');
    await eventually('op-t to lead', () => Promise.resolve(operator.isLeader()));
    await givenWorkflow(cluster, 'traced', 'traced.sh', 'spool step charge -- false\n');
  }, 600_000);

  afterAll(async () => {
    await cluster?.stop();
    await jaeger?.stop();
    process.env = saved;
  });

  it('given a Run whose pod runs a failing step, then the run is a trace from hyperspool-operator with the step under its pass, and each kind reconciled has its spans', async () => {
    await whenRunCreated(cluster, 'traced-1', 'traced');
    const key = await eventually('the run key', async () => (await getRun(cluster, 'traced-1')).metadata.labels?.['hyperspool.dev/run']);
    const [job] = await eventually('the pass-1 Job', async () => {
      const jobs = await jobsOf(cluster, key);
      return jobs.length > 0 && jobs;
    });
    const runId = (await getRun(cluster, 'traced-1')).status?.runId ?? '';
    const { token } = await givenPodOf(cluster, job!);
    const agent = agentOf(operator.url, runId, 1, token);
    const step = await agent.call({ verb: 'step', name: 'charge' });
    const traceparent = String(step.body.traceparent);
    expect(traceparent).toMatch(new RegExp(`^00-${runTraceId(runId)}-[0-9a-f]{16}-01$`));
    await agent.call({ verb: 'done', position: step.body.position, stdout: '', exitCode: 1 });
    await agent.exit(1);
    await whenJobEnds(cluster, job!, 'Failed');
    await untilPhase('run traced-1', () => getRun(cluster, 'traced-1'), 'Failed');

    const spans = await eventually('the run, its pass and its step in jaeger', async () => {
      const found = await jaeger.spans(runTraceId(runId));
      return found.length >= 3 && found;
    });
    const named = (name: string): JaegerSpan | undefined => spans.find((span) => span.operationName === name);
    expect(spans.map((span) => span.operationName).sort()).toEqual(['pass 1', 'run traced/traced.sh', 'step charge']);
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['hyperspool-operator']));
    expect(named('pass 1')!.parent).toBe(named('run traced/traced.sh')!.spanID);
    expect(named('pass 1')!.tags).toMatchObject({ 'spool.pass.outcome': 'failed', error: true });
    const charge = named('step charge')!;
    expect(charge.parent).toBe(named('pass 1')!.spanID);
    expect(charge.spanID).toBe(traceparent.split('-')[2]);
    expect(charge.tags).toMatchObject({ 'spool.call.exit_code': 1, 'spool.call.verb': 'step' });

    for (const [kind, name] of [['Run', 'traced-1'], ['Workflow', 'traced']] as const) {
      const reconciles = await eventually(`a reconcile ${kind} span for ${name}`, async () => {
        const found = (await jaeger.find('hyperspool-operator', `reconcile ${kind}`)).filter((span) => span.tags['hyperspool.name'] === name);
        return found.length > 0 && found;
      });
      // Each reconcile is a trace of its own, not a child of whatever ran before it.
      expect(reconciles.every((span) => span.parent === null && span.tags['k8s.namespace.name'] === 'team-t')).toBe(true);
    }
  });
});
