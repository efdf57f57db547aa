import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createMetrics } from '../../src/operator/kube/metrics.js';
import { pinnedKubectl } from '../support/kube.js';

/**
 * config/grafana/hyperspool.json: every query names only metrics the operator exports (a misspelt
 * one is a panel that stays empty forever) and parses as PromQL (promtool checks it, as a recording
 * rule, once Grafana's variables are filled in as Grafana would).
 */
const GRAFANA = join(import.meta.dirname, '..', '..', 'config', 'grafana');

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
const dashboard = JSON.parse(readFileSync(join(GRAFANA, 'hyperspool.json'), 'utf8')) as {
  panels: Panel[];
  templating: { list: { name: string; query: string | { query: string } }[] };
};
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== 'row');
const queries = [
  ...panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr }))),
  ...dashboard.templating.list.flatMap((variable) => (typeof variable.query === 'object' ? [{ where: `$${variable.name}`, expr: variable.query.query }] : [])),
];

describe('the Grafana dashboard', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-grafana-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('given every query of every panel and variable, then each hyperspool_ metric it names is one the operator exports, and every panel has a query', () => {
    const exported = new Set(createMetrics({ version: 'test' }).registry.getMetricsAsArray().map((metric) => metric.name));
    expect(panels.length).toBeGreaterThan(0);
    for (const panel of panels) expect(panel.targets?.length, `${panel.title} has a query`).toBeGreaterThan(0);
    for (const { where, expr } of queries) {
      const names = expr.match(/\bhyperspool_\w+/g) ?? [];
      expect(names.length, `${where} queries a hyperspool_ metric`).toBeGreaterThan(0);
      for (const name of names) expect(exported, `${where}: ${name} is not a metric of src/operator/kube/metrics.ts`).toContain(name.replace(/_(bucket|sum|count)$/, ''));
    }
  });

  it('given the panels the issue asks for, then runs by phase, pass start latency, journal write latency, passes running and the oldest pass are there', () => {
    const all = queries.map((q) => q.expr).join('\n');
    for (const metric of ['hyperspool_runs{', 'hyperspool_pass_start_latency_seconds_bucket', 'hyperspool_journal_write_seconds_bucket', 'phase="Running"', 'hyperspool_oldest_running_pass_seconds']) {
      expect(all, metric).toContain(metric);
    }
  });

  it('given each panel query with Grafana variables filled in, then promtool parses it as PromQL', () => {
    const rules = queries
      .filter((q) => !q.expr.startsWith('label_values('))
      .map((q, i) => ({ record: `hyperspool:dashboard_query_${i}`, expr: q.expr.replaceAll('$__rate_interval', '1m').replaceAll('$namespace', '.*') }));
    writeFileSync(join(dir, 'queries.yaml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
    const out = execFileSync('promtool', ['check', 'rules', join(dir, 'queries.yaml')], { encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('given config/grafana, then kustomize makes a ConfigMap of the dashboard that Grafana\'s sidecar picks up', async () => {
    const built = parse(execFileSync(await pinnedKubectl(), ['kustomize', GRAFANA], { encoding: 'utf8' })) as { kind: string; metadata: { name: string; labels: Record<string, string> }; data: Record<string, string> };
    expect(built).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'hyperspool-grafana-dashboard', labels: { grafana_dashboard: '1' } } });
    expect(built.data['hyperspool.json']).toBe(readFileSync(join(GRAFANA, 'hyperspool.json'), 'utf8'));
  }, 900_000);
});
