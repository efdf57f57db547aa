import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Probes and metrics on a port of their own, served by every replica (leader or not): kubelet's
 * probes and Prometheus must not depend on the leader, nor on the operator API's auth.
 */
export interface Readiness {
  ready: boolean;
  /** Says what is missing when not ready ("informers not synced", "store unreachable"). */
  detail?: string;
}

export interface HealthServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** All interfaces unless set: kubelet probes the pod IP. */
  host?: string;
  /** Asked on each /readyz; a check that throws or takes longer than `readyTimeoutMs` is not ready. */
  ready?: () => Readiness | Promise<Readiness>;
  /** 2 s unless set: kubelet's own probe timeout is 1 s by default, so a slow check is a failed one. */
  readyTimeoutMs?: number;
  /** Serves /metrics when given. */
  metrics?: { metricsText(): Promise<string>; contentType: string };
}

export interface HealthServer {
  /** `http://host:port`, loopback when listening on all interfaces. */
  url: string;
  port: number;
  /** The address really listened on, such as `0.0.0.0:9464` or `[::]:9464`. */
  address: string;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((request, response) => {
    handle(request, response, options).catch((error: unknown) => {
      send(response, 500, `error: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = options.host === undefined || options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    address: hostPort(address, port),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Prometheus keeps connections alive; without this close() would wait for them to idle out.
        server.closeAllConnections();
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: HealthServerOptions): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    send(response, 405, 'method not allowed\n');
    return;
  }
  const path = (request.url ?? '/').split('?', 1)[0];
  switch (path) {
    case '/healthz':
    case '/livez':
      // Liveness is only "the event loop answers": restarting the pod cures nothing else.
      send(response, 200, 'ok\n');
      return;
    case '/readyz': {
      const readiness = await checkReady(options);
      send(response, readiness.ready ? 200 : 503, readiness.ready ? 'ok\n' : `not ready: ${readiness.detail ?? 'unknown'}\n`);
      return;
    }
    case '/metrics':
      if (!options.metrics) break;
      send(response, 200, await options.metrics.metricsText(), options.metrics.contentType);
      return;
    default:
      break;
  }
  send(response, 404, 'not found\n');
}

async function checkReady(options: HealthServerOptions): Promise<Readiness> {
  if (!options.ready) return { ready: true };
  const timeoutMs = options.readyTimeoutMs ?? 2000;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(options.ready),
      new Promise<Readiness>((resolve) => {
        timer = setTimeout(() => resolve({ ready: false, detail: `readiness check took over ${timeoutMs} ms` }), timeoutMs);
      }),
    ]);
  } catch (error) {
    return { ready: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

function send(response: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

/** An address and port as people write them: `0.0.0.0:9464`, `[::]:9464`. */
export function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}
