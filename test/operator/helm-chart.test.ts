import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { V1ClusterRoleBinding, V1Deployment, V1PersistentVolumeClaim, V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { CHART, helmBinary } from '../support/helm.js';
import { startControlPlane, type ControlPlane } from '../support/kube.js';

/**
 * The Helm chart (deploy/helm/hyperspool) against config/, its source of truth: for the default
 * values it renders config/default's objects, field for field, and each optional part renders what
 * its config/ directory does; `helm lint` passes; a real kube-apiserver accepts what the default
 * and non-default values render in a server-side dry run, under the restricted Pod Security
 * Standard; and values that cannot work are refused with a message. The e2e suite installs it on
 * the real node (test/e2e/helm.e2e.ts).
 */
const REPO = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const HOW_TO_MEND =
  'the chart no longer renders what config/ does: change deploy/helm/hyperspool/templates to match (and run `bash hack/helm-chart-files.sh` for the CRDs, alerts and Argo CD health checks it copies)';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [field: string]: unknown;
}

const objectsOf = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((object): object is Manifest => object !== null);
const keyOf = (object: Manifest): string => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
const find = <T>(objects: Manifest[], kind: string, name?: string): T => {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind}${name ? `/${name}` : ''} among ${objects.map(keyOf).join(', ')}`);
  return found as unknown as T;
};

/** A non-default set of values, each where a user would set it. */
const CUSTOM = {
  image: { repository: 'registry.example.com/hyperspool/operator', tag: '1.2.3', pullPolicy: 'Always' },
  imagePullSecrets: [{ name: 'registry' }],
  replicas: 3,
  runnerImage: 'registry.example.com/hyperspool/runner:1.2.3',
  extraArgs: ['--lease-duration', '4'],
  extraEnv: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://jaeger.observability:4318' }],
  resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1Gi' } },
  nodeSelector: { 'kubernetes.io/os': 'linux' },
  database: { url: 'postgres://hyperspool:secret@db.example.com:5432/hyperspool?sslmode=require' },
  metrics: { serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'kube-prometheus-stack' } }, prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } } },
  argocd: { healthChecks: { enabled: true } },
};

describe('deploy/helm/hyperspool', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-helm-'));
  let plane: ControlPlane;
  const kubectl = (args: string[], input?: string): { stdout: string; stderr: string } => {
    const result = spawnSync(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { cwd: REPO, encoding: 'utf8', input });
    if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${result.stderr}`);
    return { stdout: result.stdout, stderr: result.stderr };
  };
  const kustomize = (path: string): Manifest[] => objectsOf(kubectl(['kustomize', path]).stdout);
  const helm = (args: string[]) => spawnSync(helmBinary(), args, { cwd: REPO, encoding: 'utf8' });
  /** `helm template` in a namespace with these values (a file, as `helm install -f` takes them). */
  const render = (namespace: string, values: object = {}): { text: string; objects: Manifest[] } => {
    const file = join(dir, `values-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, stringify(values));
    const result = helm(['template', 'hyperspool', CHART, '--namespace', namespace, '-f', file]);
    if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
    return { text: result.stdout, objects: objectsOf(result.stdout) };
  };

  beforeAll(async () => {
    // Helm first (built from the Go module proxy when missing; .ci/run builds it before the tests).
    helmBinary();
    const [started, crds] = await Promise.all([startControlPlane(), run('bash', [join(REPO, 'hack', 'prometheus-operator-crds.sh')], { encoding: 'utf8' })]);
    plane = started;
    for (const plural of ['servicemonitors', 'prometheusrules']) kubectl(['apply', '--server-side', '-f', join(crds.stdout.trim(), `monitoring.coreos.com_${plural}.yaml`)]);
    kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com']);
    // The namespaces the installs below go into, as docs/operator.md says to make them.
    const namespaces = ['hyperspool-system', 'platform', 'trial', 'argocd'].map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    }));
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: namespaces }));
  }, 900_000);

  afterAll(async () => {
    await plane?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given the default values, then it renders config/default object for object (less the Namespace, which the chart leaves to its user); with postgresql.enabled config/quickstart; with metrics config/prometheus; with argocd.healthChecks config/argocd', () => {
    /**
     * What the two tools render differently by design: kustomize names the quickstart's Secret
     * with a hash of its contents where the chart rolls the operator with a checksum annotation,
     * the chart keeps its CRDs on uninstall, and kustomize wraps long base64 (a Secret's data is
     * compared decoded).
     */
    const sameAs = (chart: Manifest[], config: Manifest[]): void => {
      const normalised = (objects: Manifest[]) =>
        new Map(
          (JSON.parse(JSON.stringify(objects).replace(/hyperspool-db-[a-z0-9]{10}\b/g, 'hyperspool-db')) as Manifest[]).map((object) => {
            if (object.kind === 'Secret') object.data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]));
            const annotations = object.metadata.annotations ?? {};
            delete annotations['helm.sh/resource-policy'];
            if (Object.keys(annotations).length === 0) delete object.metadata.annotations;
            const template = (object.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template?.metadata;
            if (template?.annotations) {
              delete template.annotations['checksum/database'];
              if (Object.keys(template.annotations).length === 0) delete template.annotations;
            }
            return [keyOf(object), object];
          }),
        );
      const [fromChart, fromConfig] = [normalised(chart), normalised(config)];
      expect([...fromChart.keys()].sort(), HOW_TO_MEND).toEqual([...fromConfig.keys()].sort());
      for (const [key, object] of fromConfig) expect(fromChart.get(key), `${key}: ${HOW_TO_MEND}`).toEqual(object);
    };
    const notNamespace = (objects: Manifest[]) => objects.filter((o) => o.kind !== 'Namespace');

    sameAs(render('hyperspool-system').objects, notNamespace(kustomize('config/default')));
    sameAs(render('hyperspool-system', { postgresql: { enabled: true } }).objects, notNamespace(kustomize('config/quickstart')));

    const monitoring = render('hyperspool-system', { metrics: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } } }).objects;
    sameAs(
      monitoring.filter((o) => o.apiVersion.startsWith('monitoring.coreos.com/')),
      kustomize('config/prometheus'),
    );

    // config/argocd is a Component merging keys into Argo CD's argocd-cm: built here over an empty one.
    writeFileSync(join(dir, 'argocd-cm.yaml'), stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cm', namespace: 'argocd' } }));
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      stringify({ resources: ['argocd-cm.yaml'], components: [relative(dir, join(REPO, 'config', 'argocd'))] }),
    );
    const merged = find<{ data: Record<string, string> }>(kustomize(dir), 'ConfigMap', 'argocd-cm');
    const health = find<{ data: Record<string, string>; metadata: { namespace: string } }>(
      render('hyperspool-system', { argocd: { healthChecks: { enabled: true } } }).objects,
      'ConfigMap',
      'hyperspool-argocd-health',
    );
    expect(health.metadata.namespace).toBe('argocd');
    expect(health.data, HOW_TO_MEND).toEqual(merged.data);

    // The chart's appVersion is the release it installs.
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(chart.appVersion, 'deploy/helm/hyperspool/Chart.yaml: appVersion is package.json\'s version').toBe(pkg.version);
  });

  it('given a non-default set of values, then each lands where it should, helm lint passes, and the API server accepts every object of the default and non-default installs in a server-side dry run with no Pod Security warning', () => {
    const custom = render('platform', CUSTOM);
    const deployment = find<V1Deployment>(custom.objects, 'Deployment', 'hyperspool-operator');
    const pod = deployment.spec?.template.spec;
    const container = pod?.containers[0];
    expect(deployment.metadata?.namespace).toBe('platform');
    expect(deployment.spec?.replicas).toBe(3);
    expect([container?.image, container?.imagePullPolicy]).toEqual(['registry.example.com/hyperspool/operator:1.2.3', 'Always']);
    expect(pod?.imagePullSecrets).toEqual([{ name: 'registry' }]);
    expect(pod?.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(container?.args).toEqual(['--runner-image=registry.example.com/hyperspool/runner:1.2.3', '--lease-duration', '4']);
    expect(container?.resources).toEqual(CUSTOM.resources);
    const env = new Map(container?.env?.map((variable) => [variable.name, variable]));
    expect(env.get('DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'hyperspool-db', key: 'url' });
    // Pass pods reach this install's Service, not the operator's default in hyperspool-system.
    expect(env.get('SPOOL_AGENT_SERVER')?.value).toBe('http://hyperspool-operator.platform.svc:7456');
    expect(env.get('OTEL_EXPORTER_OTLP_ENDPOINT')?.value).toBe('http://jaeger.observability:4318');
    // The chart keeps the URL in a Secret of its own, and a changed URL rolls the operator.
    const secret = find<V1Secret>(custom.objects, 'Secret', 'hyperspool-db');
    expect(Buffer.from(secret.data?.url ?? '', 'base64').toString()).toBe(CUSTOM.database.url);
    expect(deployment.spec?.template.metadata?.annotations?.['checksum/database']).toMatch(/^[0-9a-f]{64}$/);
    const otherURL = render('platform', { ...CUSTOM, database: { url: `${CUSTOM.database.url}&application_name=x` } });
    expect(find<V1Deployment>(otherURL.objects, 'Deployment').spec?.template.metadata?.annotations?.['checksum/database']).not.toBe(
      deployment.spec?.template.metadata?.annotations?.['checksum/database'],
    );
    // Everything names this namespace where config/ names hyperspool-system.
    expect(find<V1ClusterRoleBinding>(custom.objects, 'ClusterRoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'hyperspool-operator', namespace: 'platform' }]);
    expect(find<{ spec: { service: { namespace: string } } }>(custom.objects, 'APIService').spec.service.namespace).toBe('platform');
    expect(JSON.stringify(custom.objects)).not.toContain('hyperspool-system');
    const monitor = find<{ metadata: { labels: Record<string, string> }; spec: { namespaceSelector: unknown; endpoints: { interval: string }[] } }>(custom.objects, 'ServiceMonitor');
    expect(monitor.metadata.labels.release).toBe('kube-prometheus-stack');
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['platform'] });
    expect(monitor.spec.endpoints[0]?.interval).toBe('15s');
    expect(find<{ metadata: { labels: Record<string, string> } }>(custom.objects, 'PrometheusRule').metadata.labels.release).toBe('kube-prometheus-stack');

    // The bundled PostgreSQL on a StorageClass of the user's, or on an emptyDir.
    const trial = render('trial', { postgresql: { enabled: true, image: 'registry.example.com/postgres:16', persistence: { storageClassName: 'fast', size: '5Gi' } } });
    const claim = find<V1PersistentVolumeClaim>(trial.objects, 'PersistentVolumeClaim');
    expect([claim.spec?.storageClassName, claim.spec?.resources?.requests?.storage]).toEqual(['fast', '5Gi']);
    expect(find<V1Deployment>(trial.objects, 'Deployment', 'hyperspool-postgres').spec?.template.spec?.containers[0]?.image).toBe('registry.example.com/postgres:16');
    const url = new URL(Buffer.from(find<V1Secret>(trial.objects, 'Secret').data?.url ?? '', 'base64').toString());
    expect([url.hostname, url.password]).toEqual(['hyperspool-postgres.trial.svc', 'hyperspool-quickstart']);
    const ephemeral = render('trial', { postgresql: { enabled: true, persistence: { enabled: false } } }).objects;
    expect(ephemeral.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(find<V1Deployment>(ephemeral, 'Deployment', 'hyperspool-postgres').spec?.template.spec?.volumes).toEqual([{ name: 'data', emptyDir: {} }]);

    // As an umbrella chart's dependency: Helm hands every subchart the umbrella's global values.
    expect(render('platform', { global: { imageRegistry: 'registry.example.com' } }).objects.map(keyOf)).toEqual(render('platform').objects.map(keyOf));

    const valuesFile = join(dir, 'custom.yaml');
    writeFileSync(valuesFile, stringify(CUSTOM));
    for (const args of [[], ['-f', valuesFile], ['--set', 'postgresql.enabled=true']]) {
      const lint = helm(['lint', '--strict', CHART, ...args]);
      expect(lint.status, `helm lint ${args.join(' ')}:\n${lint.stdout}${lint.stderr}`).toBe(0);
      expect(lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }

    for (const install of [render('hyperspool-system'), custom, trial]) {
      const { stdout, stderr } = kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], install.text);
      for (const object of install.objects) expect(stdout).toContain(`${object.metadata.name} serverside-applied (server dry run)`);
      expect(stderr).not.toMatch(/PodSecurity/);
    }
  });

  it('given values that cannot work, then helm refuses them, saying which, and renders nothing', () => {
    const refused = (values: string[], message: RegExp): void => {
      const result = helm(['template', 'hyperspool', CHART, '--namespace', 'hyperspool-system', ...values.flatMap((value) => ['--set', value])]);
      expect(result.status, values.join(' ')).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
    };
    refused(['postgresql.enabled=true', 'database.url=postgres://db.example.com/hyperspool'], /database\.url and postgresql\.enabled name two databases: set one/);
    refused(['database.existingSecret='], /database\.existingSecret \(or database\.url, or postgresql\.enabled\) is required/);
    refused(['database.url=mysql://db.example.com/hyperspool'], /\/database\/url/);
    refused(['replicas=two'], /\/replicas/);
    refused(['postgresql.password=p@ss/word'], /\/postgresql\/password/);
    refused(['image.pullPolicy=Sometimes'], /\/image\/pullPolicy/);
    refused(['metrics.serviceMonitor.interval=often'], /\/metrics\/serviceMonitor\/interval/);
    refused(['replica=2'], /additional properties 'replica' not allowed|replica/);
  });
});
