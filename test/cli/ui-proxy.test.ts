import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUiProxy, type UiProxy } from '../../src/cli/cluster/ui-proxy.js';
import { useDevServer } from '../support/dev.js';

/**
 * `spool ui`'s loopback proxy, against a stand-in for the API server's service proxy (a local
 * server that takes the service-proxy path off and passes the request to a real `spool dev`):
 * what reaches the cluster carries the person's token, the namespace as the project, and none of
 * the browser's cookies; another site's page is refused. The real thing: test/e2e/ui.e2e.ts.
 */

const PREFIX = '/api/v1/namespaces/hyperspool-system/services/hyperspool-operator:http/proxy';
const dev = useDevServer();
let apiServer: Server;
let proxy: UiProxy;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  apiServer = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    if (!req.url?.startsWith(PREFIX)) {
      res.writeHead(404).end();
      return;
    }
    const target = new URL(`${dev.url}${req.url.slice(PREFIX.length)}`);
    const { authorization: _auth, host: _host, ...headers } = req.headers;
    void _auth;
    void _host;
    const upstream = request(target, { method: req.method, headers: { ...headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => apiServer.listen(0, '127.0.0.1', () => resolve()));
  const address = apiServer.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'alice', token: 'alice-token' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'alice', namespace: 'team-a' }],
    currentContext: 'c',
  });
  proxy = await startUiProxy({ kubeConfig, namespace: 'team-a', operatorNamespace: 'hyperspool-system', operatorService: 'hyperspool-operator', port: 0 });
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  apiServer?.close();
});

describe('spool ui’s loopback proxy', () => {
  it('serves the pages and the API through the service proxy, as the person, in their namespace', async () => {
    const page = await fetch(`${proxy.url}/runs`, { headers: { Cookie: 'session=secret' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/assets/main-');
    const list = await fetch(`${proxy.url}/v1/runs?limit=5`);
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ runs: [] });

    const [pageCall, apiCall] = seen.slice(-2);
    expect(pageCall?.url).toBe(`${PREFIX}/runs`);
    expect(pageCall?.headers.authorization).toBe('Bearer alice-token');
    expect(pageCall?.headers['x-spool-authorization']).toBe('Bearer alice-token');
    expect(pageCall?.headers.cookie).toBeUndefined();
    expect(apiCall?.url).toBe(`${PREFIX}/v1/runs?limit=5&project=team-a`);
    // A run's own routes take the project from its id, and refuse one given beside it.
    await fetch(`${proxy.url}/v1/runs/${encodeURIComponent('c:team-a:run-x')}/timeline`);
    expect(seen.at(-1)?.url).toBe(`${PREFIX}/v1/runs/c%3Ateam-a%3Arun-x/timeline`);
  });

  it('takes off the service-proxy path the API server writes into the links of the HTML it proxies', async () => {
    const response = await fetch(`${proxy.url}${PREFIX}/runs`);
    expect(response.status).toBe(200);
    expect(seen.at(-1)?.url).toBe(`${PREFIX}/runs`);
  });

  it('refuses another site’s page that would change something, and a Host that is not loopback (DNS rebinding)', async () => {
    const before = seen.length;
    const forged = await fetch(`${proxy.url}/v1/runs/x/cancel`, { method: 'POST', headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' }, body: '{}' });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toMatchObject({ error: { code: 'forbidden_origin' } });
    const rebound = await new Promise<number>((resolve, reject) => {
      request(`${proxy.url}/runs`, { headers: { Host: 'evil.example' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(rebound).toBe(403);
    expect(seen.length).toBe(before);
  });
});
