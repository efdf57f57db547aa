import { createServer, request as plainRequest, type IncomingMessage, type RequestOptions, type Server, type ServerResponse } from 'node:http';
import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { SpoolError } from '../../common/errors.js';
import { isLoopbackHost, isOwnOrigin } from '../../common/loopback-origin.js';
import { USER_AUTHORIZATION } from '../../server/access.js';

export interface UiProxyOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  operatorNamespace: string;
  operatorService: string;
  /** 0 for any free port. */
  port: number;
}

export interface UiProxy {
  url: string;
  close(): Promise<void>;
}

/** Headers that belong to one hop, or to the person's browser and not to the cluster. */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'cookie', 'authorization', USER_AUTHORIZATION, 'origin', 'referer']);

/** The API's routes that take `?project=` (docs/api.md): the lists, and state cells. */
const PROJECT_ROUTES = /^\/v1\/(runs|workflows|handlers|schedules|state\/.+)$/;


/**
 * The loopback end of `spool ui`: every request the person's browser makes here goes on to the
 * operator through the API server's service proxy, as the CLI's other verbs go, with the person's
 * own credentials from the kubeconfig (the token also in X-Spool-Authorization, which the API
 * server passes on), so the operator authorizes each API call as that person. Like `spool dev`, it
 * answers only loopback Host names and refuses a cross-origin request that changes anything, so no
 * other web page can act with the person's token.
 */
export async function startUiProxy(options: UiProxyOptions): Promise<UiProxy> {
  const cluster = options.kubeConfig.getCurrentCluster();
  if (!cluster) throw new SpoolError('usage', 'the kubeconfig names no current cluster; pass --context');
  const prefix = `/api/v1/namespaces/${options.operatorNamespace}/services/${options.operatorService}:http/proxy`;
  const base = new URL(cluster.server);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host ?? '';
    if (!isLoopbackHost(host)) return refuse(res, 403, 'forbidden_host', `spool ui answers requests for localhost or 127.0.0.1, not '${host}'`);
    const changes = req.method !== 'GET' && req.method !== 'HEAD';
    const origin = req.headers.origin;
    if (changes && origin !== undefined && !isOwnOrigin(origin, host)) {
      return refuse(res, 403, 'forbidden_origin', `a page from ${origin} may not change anything here`);
    }
    // The API server rewrites links in the HTML it proxies to carry its own path: take it off again.
    let path = req.url ?? '/';
    if (path.startsWith(prefix)) path = path.slice(prefix.length) || '/';
    const target = new URL(`${base.origin}${base.pathname.replace(/\/$/, '')}${prefix}${path}`);
    // On a cluster the project is the namespace `spool ui -n` names: the lists take it as a query
    // parameter (a run's own routes read it from the run's id, and refuse one).
    if (PROJECT_ROUTES.test(path.split('?')[0] ?? '') && !target.searchParams.has('project')) target.searchParams.set('project', options.namespace);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !DROPPED.has(name.toLowerCase())) headers[name] = value;
    }
    const outgoing: RequestOptions & { headers: Record<string, string> } = { method: req.method ?? 'GET', headers };
    await options.kubeConfig.applyToHTTPSOptions(outgoing);
    const token = outgoing.headers.Authorization ?? outgoing.headers.authorization;
    if (token) outgoing.headers[USER_AUTHORIZATION] = token;
    const upstream = (target.protocol === 'https:' ? request : plainRequest)(target, outgoing, (answer) => {
      const passed: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !['connection', 'keep-alive', 'transfer-encoding'].includes(name)) passed[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, passed);
      answer.pipe(res);
    });
    upstream.on('error', (error) => refuse(res, 502, 'unavailable', `cannot reach the cluster at ${base.origin}: ${error.message}`));
    req.pipe(upstream);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => refuse(res, 502, 'unavailable', (error as Error).message));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message } }));
}
