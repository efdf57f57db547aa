// A graph document as a Workflow on the real node (issue 30): its http nodes are sent from the
// operator, where a graph's pass runs (docs/graphs.md), to a Service in the test's namespace that
// counts requests per Idempotency-Key. The seed's charge node, verbatim but for the URL (and a
// retry), answered 503 once, is sent twice with one key; a fan_out over three items sends three.
// A script Workflow calls a graph Workflow of its namespace by name (`spool call-graph tiny`).
//
//   npm run test:e2e -- test/e2e/graphs.e2e.ts
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilPhase, deployHyperspool, E2E_LABEL, eventually, openCluster, repo, sh, SYSTEM, type Cluster, type KubeObject } from './support/cluster.js';

interface RunResource {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { runId?: string; phase?: string; message?: string };
}

/**
 * The counting server, in the runner image's node: each request is one line of its log,
 * `<method> <path> <key> <status>`; a path with ?fail=1 answers the first request of each key 503.
 */
const KEY_SERVER = `
const seen = new Map();
require('node:http').createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const key = req.headers['idempotency-key'] || '-';
  const count = (seen.get(url.pathname + key) || 0) + 1;
  seen.set(url.pathname + key, count);
  const status = count <= Number(url.searchParams.get('fail') || 0) ? 503 : 200;
  console.log(req.method + ' ' + url.pathname + ' ' + key + ' ' + status);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ key, count }));
}).listen(8080);
`;

describe('graphs on a real cluster', () => {
  const runLabel = `e2e-graph-${Date.now().toString(36)}`;
  const namespace = runLabel;
  let cluster: Cluster;
  let userConfig = '';

  const kubectl = (...args: string[]): Promise<string> => cluster.kubectl(...args);
  const phaseOf = (run: string): Promise<RunResource> => cluster.getJson<RunResource>('-n', namespace, 'run', run);
  const spool = (...args: string[]): Promise<string> =>
    sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', userConfig, '-n', namespace]);
  const whenRun = (run: string, phase: 'Succeeded', timeoutMs = 180_000): Promise<RunResource> =>
    untilPhase(run, () => phaseOf(run), phase, timeoutMs, async () => `${await spool('logs', run).catch(() => '')}\n${await cluster.operatorLogs()}`);
  /** The counting server's lines for a path: `[key, status]`, in the order the requests came. */
  const requestsTo = async (path: string): Promise<string[][]> =>
    (await kubectl('-n', namespace, 'logs', 'deployment/keys'))
      .split('\n')
      .map((line) => line.split(' '))
      .filter((fields) => fields[1] === path)
      .map(([, , key = '', status = '']) => [key, status]);

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await cluster.apply(...keyServer(namespace));
    userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
    await eventually('the key server ready', async () => (await kubectl('-n', namespace, 'get', 'deployment', 'keys', '-o', 'jsonpath={.status.readyReplicas}')) === '1', 120_000);
    // A ready pod is not yet a routed Service: until kube-proxy writes its rules, a connection to
    // the Service's IP leaves the node and whatever answers there (this machine's egress proxy
    // answers 503) is what the charge node would see. So ask from the operator's pod first.
    const probe = `fetch('http://keys.${namespace}.svc.cluster.local:8080/probe').then(async (r) => process.exit(r.status === 200 && 'count' in (await r.json()) ? 0 : 1), () => process.exit(1))`;
    await eventually('the key server routed from the operator', async () => {
      await kubectl('-n', SYSTEM, 'exec', 'deploy/hyperspool-operator', '--', 'node', '-e', probe);
      return true;
    }, 60_000);
  });

  afterAll(async () => {
    if (!cluster) return;
    if (!process.env.HYPERSPOOL_E2E_KEEP) {
      await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
      await kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    }
    await cluster.close();
  });

  it("given a graph Workflow whose charge node calls a Service and is answered 503 once, then it retries with one key, its fan_out sends three keys, and the Run ends Succeeded", async () => {
    const service = `http://keys.${namespace}.svc.cluster.local:8080`;
    const graph = {
      nodes: [
        {
          id: 'charge',
          type: 'http',
          retry: { attempts: 3, backoff: '200ms' },
          config: { method: 'POST', url: `${service}/charges?fail=1`, headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } },
        },
        {
          id: 'notify',
          type: 'http',
          depends_on: ['charge'],
          fan_out: { items: ['a', 'b', 'c'], max_parallel: 2 },
          config: { method: 'POST', url: `${service}/notify`, body: { $expr: 'item' }, headers: { 'Idempotency-Key': { $expr: 'node.idempotency_key' } } },
        },
      ],
      outputs: { charged: { $expr: 'nodes.charge.output.body.count' } },
    };
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'charge', namespace }, spec: { filename: 'charge.json', script: JSON.stringify(graph, null, 2) } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: 'charge-1', namespace }, spec: { workflowRef: { name: 'charge' } } },
    );
    await whenRun('charge-1', 'Succeeded');

    const charges = await requestsTo('/charges');
    expect(charges.map(([, status]) => status)).toEqual(['503', '200']);
    expect(charges[0]?.[0]).toMatch(/^spool-[0-9a-f]{32}$/);
    expect(charges[1]?.[0]).toBe(charges[0]?.[0]);
    const notified = await requestsTo('/notify');
    expect(new Set(notified.map(([key]) => key)).size).toBe(3);
    // A graph's pass runs in the operator: no pass pod was made for the run.
    const key = (await phaseOf('charge-1')).metadata.labels?.['hyperspool.dev/run'] ?? '';
    expect(await kubectl('-n', namespace, 'get', 'pods', '-l', `hyperspool.dev/run=${key}`, '-o', 'name')).toBe('');
  });

  it("given a script Workflow that calls `spool call-graph tiny` and `call-graph nope`, then tiny (a graph Workflow of its namespace) runs as its child and prints its outputs, and nope is refused in one line", async () => {
    const tiny = { input: { x: { description: 'echoed as y' } }, nodes: [{ id: 'nap', type: 'sleep', config: { duration: '1s' } }], outputs: { y: { $expr: 'input.x' } } };
    const caller = [
      '#!/bin/bash',
      'set -u',
      'if spool call-graph nope 2>refused.txt; then echo "nope ran"; exit 3; fi',
      'echo "refused: $(cat refused.txt)"',
      "spool call-graph tiny --input '{\"x\":\"7\"}'",
    ].join('\n');
    await cluster.apply(
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'tiny', namespace }, spec: { filename: 'tiny.json', script: JSON.stringify(tiny) } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Workflow', metadata: { name: 'caller', namespace }, spec: { filename: 'caller.sh', script: `${caller}\n` } },
      { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: 'caller-1', namespace }, spec: { workflowRef: { name: 'caller' } } },
    );
    await whenRun('caller-1', 'Succeeded');
    const log = await spool('logs', 'caller-1');
    // The graph's outputs, printed by the call's replay on the pass after the child ended.
    expect(log).toContain('{"y":"7"}\n');
    expect(log).toContain(`refused: spool call-graph: cannot read nope: no such file, and there is no Workflow nope in namespace ${namespace}\n`);
    expect(log).not.toContain('nope ran');
  });
});

/** The counting server: a Deployment of the runner image's node, and its Service. */
function keyServer(namespace: string): KubeObject[] {
  const labels = { 'app.kubernetes.io/name': 'keys' };
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'keys', namespace },
      spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 8080 }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'keys', namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'keys',
                image: 'hyperspool/runner:dev',
                imagePullPolicy: 'IfNotPresent',
                command: ['node', '-e', KEY_SERVER],
                ports: [{ name: 'http', containerPort: 8080 }],
                readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
              },
            ],
          },
        },
      },
    },
  ];
}
