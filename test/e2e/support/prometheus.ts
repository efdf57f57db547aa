// A real Prometheus server (Debian's `prometheus` package) for the e2e suite: it scrapes the
// operator's replicas as config/prometheus/monitor.yaml (the ServiceMonitor) tells the Prometheus
// Operator to, and evaluates the rules it is given. On the local node it runs inside the node's
// network namespace, where pod IPs are routable, and listens on the node's address, which the host
// reaches through the veth.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { eventually, repo } from './cluster.js';

export interface Prometheus {
  url: string;
  /** Alerts as /api/v1/alerts answers them. */
  alerts(): Promise<{ labels: Record<string, string>; state: string; annotations: Record<string, string> }[]>;
  /** Active scrape targets as /api/v1/targets answers them. */
  targets(): Promise<{ labels: Record<string, string>; health: string; lastError: string }[]>;
  /** Its log, for a failure's message. */
  log(): string;
  stop(): Promise<void>;
}

interface ServiceMonitor {
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints: { port: string; path: string; honorLabels?: boolean }[];
  };
}

interface Endpoints {
  items: {
    metadata: { name: string; namespace: string; labels?: Record<string, string> };
    subsets?: { addresses?: { ip: string; targetRef?: { name: string } }[]; ports?: { name?: string; port: number }[] }[];
  }[];
}

/**
 * The targets the Prometheus Operator would give Prometheus for the ServiceMonitor: the endpoints
 * of the Services in its namespaces with its labels, on the port it names, one per replica. Found
 * here because Debian builds Prometheus without Kubernetes service discovery; Prometheus reads
 * them from a file (file_sd_configs), as it would read them from its kubernetes_sd.
 */
async function targetsOf(monitor: ServiceMonitor, kubectl: (...args: string[]) => Promise<string>): Promise<{ targets: string[]; labels: Record<string, string> }[]> {
  const endpoint = monitor.spec.endpoints[0];
  if (!endpoint) throw new Error('config/prometheus/monitor.yaml has no endpoint');
  const selector = Object.entries(monitor.spec.selector.matchLabels).map(([key, value]) => `${key}=${value}`).join(',');
  const groups: { targets: string[]; labels: Record<string, string> }[] = [];
  for (const namespace of monitor.spec.namespaceSelector.matchNames) {
    const endpoints = JSON.parse(await kubectl('-n', namespace, 'get', 'endpoints', '-l', selector, '-o', 'json')) as Endpoints;
    for (const item of endpoints.items) {
      for (const subset of item.subsets ?? []) {
        const port = subset.ports?.find((p) => p.name === endpoint.port)?.port;
        if (port === undefined) continue;
        for (const address of subset.addresses ?? []) {
          groups.push({ targets: [`${address.ip}:${port}`], labels: { namespace, service: item.metadata.name, pod: address.targetRef?.name ?? '' } });
        }
      }
    }
  }
  return groups;
}

/**
 * Starts Prometheus in the local node's network namespace with these rule groups, scraping the
 * ServiceMonitor's targets and evaluating every second. Throws when the suite runs on another
 * cluster (kind): its pods are not reachable from here.
 */
export async function startPrometheus(kubectl: (...args: string[]) => Promise<string>, groups: object[]): Promise<Prometheus> {
  if (process.env.HYPERSPOOL_E2E_KUBECONFIG) throw new Error('startPrometheus runs Prometheus inside the local node; on another cluster run it there');
  const netns = process.env.HYPERSPOOL_NODE_NETNS ?? 'hyperspool-node';
  const nodeIp = process.env.HYPERSPOOL_NODE_IP ?? '10.244.255.2';
  const dir = mkdtempSync(join(tmpdir(), 'hyperspool-e2e-prometheus-'));
  const monitor = parse(readFileSync(join(repo, 'config', 'prometheus', 'monitor.yaml'), 'utf8')) as ServiceMonitor;
  const endpoint = monitor.spec.endpoints[0];
  writeFileSync(join(dir, 'targets.json'), JSON.stringify(await targetsOf(monitor, kubectl)));
  writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [join(dir, 'rules.yaml')],
      // honor_labels as the ServiceMonitor says: the target's namespace label (the operator's) and a
      // metric's own (the run's) collide, and only honorLabels keeps the run's.
      scrape_configs: [
        { job_name: 'hyperspool-operator', metrics_path: endpoint?.path ?? '/metrics', honor_labels: endpoint?.honorLabels ?? false, file_sd_configs: [{ files: [join(dir, 'targets.json')] }] },
      ],
    }),
  );

  // A port picked at random in the node's namespace; one that is taken makes Prometheus exit, and another is tried.
  for (let attempt = 1; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const url = `http://${nodeIp}:${port}`;
    let output = '';
    const child: ChildProcess = spawn(
      'ip',
      ['netns', 'exec', netns, 'prometheus', `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${nodeIp}:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const api = async <T>(path: string): Promise<T> => ((await (await fetch(`${url}${path}`)).json()) as { data: T }).data;
    try {
      await eventually('Prometheus ready', async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited:\n${output}`);
        return (await fetch(`${url}/-/ready`)).ok;
      }, 30_000);
    } catch (error) {
      child.kill();
      await exited;
      if (attempt >= 3 || !/address already in use/.test(output)) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
      continue;
    }
    return {
      url,
      alerts: async () => (await api<{ alerts: { labels: Record<string, string>; state: string; annotations: Record<string, string> }[] }>('/api/v1/alerts')).alerts,
      targets: async () => (await api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] }>('/api/v1/targets')).activeTargets,
      log: () => output,
      stop: async () => {
        child.kill();
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
