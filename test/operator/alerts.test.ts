import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { createMetrics } from '../../src/operator/kube/metrics.js';
import { startControlPlane, type ControlPlane } from '../support/kube.js';

/**
 * config/prometheus checked by the tools that will run it: Debian's promtool checks the rules and
 * runs their unit tests (config/prometheus/rules.test.yaml), and a real kube-apiserver with the
 * Prometheus Operator's own CRDs (from its Go module, hack/prometheus-operator-crds.sh) accepts the
 * ServiceMonitor and PrometheusRule in a server-side dry run.
 */
const REPO = join(import.meta.dirname, '..', '..');
const PROMETHEUS = join(REPO, 'config', 'prometheus');
const run = promisify(execFile);

interface Rule {
  alert: string;
  expr: string;
}
interface PrometheusRule {
  kind: string;
  spec: { groups: { name: string; rules: Rule[] }[] };
}

function promtool(args: string[], cwd: string): string {
  try {
    return execFileSync('promtool', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { code?: string; stdout?: string; stderr?: string };
    if (failed.code === 'ENOENT') throw new Error("promtool is not installed: apt-get install prometheus (Debian's package; .ci/run installs it)");
    throw new Error(`promtool ${args.join(' ')} failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
}

describe('config/prometheus', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-alerts-'));
  const rule = parse(readFileSync(join(PROMETHEUS, 'rules.yaml'), 'utf8')) as PrometheusRule;
  let plane: ControlPlane;
  const kubectl = (...args: string[]): string => execFileSync(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  beforeAll(async () => {
    // The rules as Prometheus reads them, beside their unit tests.
    writeFileSync(join(dir, 'hyperspool.rules.yaml'), stringify(rule.spec));
    copyFileSync(join(PROMETHEUS, 'rules.test.yaml'), join(dir, 'rules.test.yaml'));
    const [started, crds] = await Promise.all([startControlPlane(), run('bash', [join(REPO, 'hack', 'prometheus-operator-crds.sh')], { encoding: 'utf8' })]);
    plane = started;
    const crdDir = crds.stdout.trim();
    for (const plural of ['servicemonitors', 'prometheusrules']) kubectl('apply', '--server-side', '-f', join(crdDir, `monitoring.coreos.com_${plural}.yaml`));
    kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com');
    kubectl('create', 'namespace', 'hyperspool-system');
  }, 900_000);

  afterAll(async () => {
    await plane?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given the PrometheusRule, then promtool finds its rules valid, and its unit tests (each alert firing and staying quiet) pass', () => {
    expect(promtool(['check', 'rules', 'hyperspool.rules.yaml'], dir)).toContain(`SUCCESS: ${rule.spec.groups.flatMap((g) => g.rules).length} rules found`);
    expect(promtool(['test', 'rules', 'rules.test.yaml'], dir)).toContain('SUCCESS');
  });

  it('given the unit tests, then every alert has a case where it fires and one where it stays quiet, and every metric an alert names is one the operator exports', () => {
    const tests = parse(readFileSync(join(PROMETHEUS, 'rules.test.yaml'), 'utf8')) as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test);
    const alerts = rule.spec.groups.flatMap((g) => g.rules);
    expect(alerts.map((a) => a.alert)).toEqual(
      expect.arrayContaining(['HyperspoolRunsFailing', 'HyperspoolPassesLost', 'HyperspoolPassPodsNotStarting', 'HyperspoolRunsWaitingLong', 'HyperspoolDatabaseUnreachable']),
    );
    const exported = new Set(createMetrics({ version: 'test' }).registry.getMetricsAsArray().map((metric) => metric.name));
    for (const { alert, expr } of alerts) {
      expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length > 0), `${alert} fires in a test`).toBe(true);
      expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length === 0), `${alert} stays quiet in a test`).toBe(true);
      for (const metric of expr.match(/\bhyperspool_\w+/g) ?? []) expect(exported, `${alert}: ${metric} is not a metric of src/operator/kube/metrics.ts`).toContain(metric);
    }
  });

  it("given the Prometheus Operator's CRDs on a kube-apiserver, then the ServiceMonitor and PrometheusRule pass a server-side dry run, and a broken rule does not", () => {
    const built = kubectl('kustomize', 'config/prometheus');
    expect(parseAllDocuments(built).map((doc) => (doc.toJS() as { kind: string }).kind).sort()).toEqual(['PrometheusRule', 'ServiceMonitor']);
    writeFileSync(join(dir, 'monitoring.yaml'), built);
    const applied = kubectl('apply', '--server-side', '--dry-run=server', '-f', join(dir, 'monitoring.yaml'));
    expect(applied).toContain('servicemonitor.monitoring.coreos.com/hyperspool-operator serverside-applied (server dry run)');
    expect(applied).toContain('prometheusrule.monitoring.coreos.com/hyperspool-operator serverside-applied (server dry run)');

    // The CRD's schema is really checked: a `for` that is not a Prometheus duration is refused.
    const broken = structuredClone(rule) as PrometheusRule & { spec: { groups: { rules: (Rule & { for?: string })[] }[] } };
    const first = broken.spec.groups[0]?.rules[0];
    if (first) first.for = 'ten minutes';
    writeFileSync(join(dir, 'broken.yaml'), stringify(broken));
    expect(() => kubectl('apply', '--server-side', '--dry-run=server', '-f', join(dir, 'broken.yaml'))).toThrow(/spec\.groups\[0\]\.rules\[0\]\.for/);
  });
});
