import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer, type Readiness } from '../../../src/operator/kube/health-server.js';
import { createMetrics } from '../../../src/operator/kube/metrics.js';

describe('health server and metrics', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers /healthz always, /readyz from the callback and /metrics from its own registry', async () => {
    const metrics = createMetrics({
      version: '1.2.3',
      oldestRunningPassStartedAt: () => new Date(Date.now() - 90_000),
    });
    metrics.runs.set({ namespace: 'team-a', phase: 'Running' }, 3);
    metrics.reconcileErrors.inc({ kind: 'Run', namespace: 'team-a', reason: 'Forbidden' });
    metrics.runsFailed.inc({ namespace: 'team-a' });
    metrics.passesStarted.inc({ namespace: 'team-b' }, 2);
    metrics.passStartLatency.observe(0.7);
    let readiness: Readiness = { ready: false, detail: 'informers not synced' };
    server = await startHealthServer({ port: 0, ready: () => readiness, metrics });

    const healthz = await fetch(`${server.url}/healthz`);
    expect(healthz.status).toBe(200);

    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain('informers not synced');
    readiness = { ready: true };
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const scrape = await fetch(`${server.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toContain('text/plain');
    const text = await scrape.text();
    expect(text).toContain('hyperspool_build_info{version="1.2.3"} 1');
    expect(text).toContain('hyperspool_runs{namespace="team-a",phase="Running"} 3');
    expect(text).toContain('hyperspool_reconcile_errors_total{kind="Run",namespace="team-a",reason="Forbidden"} 1');
    expect(text).toContain('hyperspool_pass_start_latency_seconds_bucket{le="1"} 1');
    expect(text).toContain('hyperspool_is_leader 0');
    expect(text).toContain('hyperspool_queue_depth 0');
    expect(text).toContain('hyperspool_runs_failed_total{namespace="team-a"} 1');
    expect(text).toContain('hyperspool_passes_started_total{namespace="team-b"} 2');
    expect(text).toContain('hyperspool_journal_write_seconds_count 0');
    expect(text).toMatch(/hyperspool_oldest_running_pass_seconds 9\d/);
    expect(text).toContain('hyperspool_process_cpu_user_seconds_total');
    // Nothing unprefixed: every series, process metrics included, is ours.
    const names = text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.split(/[{ ]/, 1)[0] ?? '');
    expect(names.filter((name) => !name.startsWith('hyperspool_'))).toEqual([]);

    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });

  it('is not ready when the readiness check throws or hangs', async () => {
    let mode: 'throw' | 'hang' = 'throw';
    server = await startHealthServer({
      port: 0,
      readyTimeoutMs: 100,
      ready: () => {
        if (mode === 'throw') throw new Error('store unreachable');
        return new Promise<Readiness>(() => undefined);
      },
    });
    const thrown = await fetch(`${server.url}/readyz`);
    expect(thrown.status).toBe(503);
    expect(await thrown.text()).toContain('store unreachable');
    mode = 'hang';
    const hung = await fetch(`${server.url}/readyz`);
    expect(hung.status).toBe(503);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });

  it('two metric sets do not share series', async () => {
    const one = createMetrics({ version: 'a', processMetrics: false });
    const two = createMetrics({ version: 'b', processMetrics: false });
    one.passesStarted.inc({ namespace: 'a' }, 5);
    expect(await one.metricsText()).toContain('hyperspool_passes_started_total{namespace="a"} 5');
    expect(await two.metricsText()).not.toContain('hyperspool_passes_started_total{');
  });

  it('a replica that stops leading reports none of what only the leader knows', async () => {
    const metrics = createMetrics({ version: 'a', processMetrics: false });
    metrics.runs.set({ namespace: 'a', phase: 'Waiting' }, 7);
    metrics.queueDepth.set(4);
    metrics.oldestRunningPass.set(30);
    metrics.passesStarted.inc({ namespace: 'a' });
    metrics.forgetLeaderOnly();
    const text = await metrics.metricsText();
    expect(text).not.toMatch(/^hyperspool_runs\{/m);
    expect(text).toMatch(/^hyperspool_queue_depth 0$/m);
    expect(text).toMatch(/^hyperspool_oldest_running_pass_seconds 0$/m);
    // Counters are this replica's own history: they stay.
    expect(text).toContain('hyperspool_passes_started_total{namespace="a"} 1');
  });
});
