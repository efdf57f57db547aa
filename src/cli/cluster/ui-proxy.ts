import { createServer, request as plainRequest, type IncomingMessage, type RequestOptions, type Server, type ServerResponse } from 'node:http';
import { request } from 'node:https';
import { SpoolError } from '../../common/errors.js';
import { isLoopbackHost, isOwnOrigin } from '../../common/loopback-origin.js';
import { aggregatedRequest, uiFilePath } from './aggregated-path.js';
import type { ClusterTarget } from './kube-target.js';

export interface UiProxyOptions {
  target: ClusterTarget;
  /** 0 for any free port. */
  port: number;
}

export interface UiProxy {
  url: string;
  close(): Promise<void>;
}

/** Request headers that go on to the cluster: what the page asks for, never the browser's cookies or credentials. */
const PASSED = ['accept', 'accept-encoding', 'accept-language', 'if-none-match', 'if-modified-since'];
/** Answer headers that belong to one hop. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);
/** A request body the pages send: a signal's payload, an approval's form. */
const BODY_LIMIT = 1024 * 1024;

/**
 * The loopback end of `spool ui`: every request the person's browser makes here goes on to the
 * operator's aggregated API (api.hyperspool.dev) through kube-apiserver, as the CLI's other verbs
 * go, with the person's own credentials from the kubeconfig (a client certificate, a token, an
 * exec plugin: whatever it holds), so kube-apiserver and the operator ask RBAC about each call as
 * that person. The pages' /v1 calls become their aggregated requests (aggregated-path.ts) and the
 * pages themselves the `ui` files. Like `spool dev`, it answers only loopback Host names and
 * refuses a cross-origin request that changes anything, so no other web page can act as the person.
 */
export async function startUiProxy({ target, port }: UiProxyOptions): Promise<UiProxy> {
  const base = new URL(target.kubeConfig.getCurrentCluster()?.server ?? '');

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host ?? '';
    if (!isLoopbackHost(host)) return refuse(res, 403, 'forbidden_host', `spool ui answers requests for localhost or 127.0.0.1, not '${host}'`);
    const method = req.method ?? 'GET';
    const origin = req.headers.origin;
    if (method !== 'GET' && method !== 'HEAD' && origin !== undefined && !isOwnOrigin(origin, host)) {
      return refuse(res, 403, 'forbidden_origin', `a page from ${origin} may not change anything here`);
    }
    const path = req.url ?? '/';
    const api = path === '/v1' || path.startsWith('/v1/') || path.startsWith('/v1?');
    if (!api && method !== 'GET' && method !== 'HEAD') return refuse(res, 405, 'method_not_allowed', `${method} ${path}: the pages are only read`);
    let outgoing: { method: string; path: string; body?: unknown };
    if (api) {
      const body = method === 'GET' || method === 'HEAD' ? undefined : await readJson(req);
      const aggregated = await aggregatedRequest(method, path.slice('/v1'.length), body, target.namespace, (runId) => target.runName(runId));
      if (!aggregated) return refuse(res, 404, 'not_found', `${method} ${path} is not served through spool ui`);
      outgoing = aggregated;
    } else {
      // The aggregated API serves the UI's files to GET only; a HEAD (curl -I) gets the GET's
      // headers, and Node sends no body to a HEAD.
      outgoing = { method: 'GET', path: uiFilePath(path.split('?')[0] ?? '/') };
    }
    const headers: Record<string, string> = {};
    for (const name of PASSED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    // The page comes as text, for answerPage to mend its links.
    if (outgoing.path === uiFilePath('/')) delete headers['accept-encoding'];
    const payload = outgoing.body === undefined ? undefined : JSON.stringify(outgoing.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const options: RequestOptions & { headers: Record<string, string> } = { method: outgoing.method, headers };
    await target.kubeConfig.applyToHTTPSOptions(options);
    const url = new URL(`${base.origin}${base.pathname.replace(/\/$/, '')}${outgoing.path}`);
    const upstream = (url.protocol === 'https:' ? request : plainRequest)(url, options, (answer) => {
      const status = answer.statusCode ?? 502;
      if (api && status >= 400 && answer.headers['content-type']?.includes('json')) return answerApiError(answer, status, res);
      if (!api && answer.headers['content-type']?.startsWith('text/html')) return answerPage(answer, status, res);
      res.writeHead(status, headersOf(answer, !api));
      answer.pipe(res);
    });
    upstream.on('error', (error) => refuse(res, 502, 'unavailable', `cannot reach the cluster at ${base.origin}: ${error.message}`));
    upstream.end(payload);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const known = error instanceof SpoolError;
      refuse(res, known && error.kind === 'forbidden' ? 403 : known && error.kind === 'not_found' ? 404 : known && error.kind === 'usage' ? 400 : 502, known ? error.kind : 'unavailable', (error as Error).message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A refused API call in the API's one error shape, which the pages show: kube-apiserver's own
 * refusals (RBAC, authentication, an operator it cannot reach) are `metav1.Status` objects.
 */
function answerApiError(answer: IncomingMessage, status: number, res: ServerResponse): void {
  let text = '';
  answer.setEncoding('utf8');
  answer.on('data', (chunk: string) => (text += chunk));
  answer.on('end', () => {
    let parsed: { kind?: string; reason?: string; message?: string } = {};
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      // Not JSON after all: passed on as it came.
    }
    if (parsed.kind !== 'Status') {
      res.writeHead(status, { 'Content-Type': answer.headers['content-type'] ?? 'application/json' });
      res.end(text);
      return;
    }
    const code = status === 401 ? 'unauthenticated' : status === 403 ? 'forbidden' : status === 404 ? 'not_found' : status === 503 ? 'unavailable' : (parsed.reason ?? 'error').toLowerCase();
    refuse(res, status, code, parsed.message ?? `the cluster answered ${status}`);
  });
}

/**
 * The page, with its links set back to this address: kube-apiserver's proxy rewrites the links of
 * the HTML it proxies to the operator's own address (https://POD-IP:PORT/assets/...), which the
 * browser could not reach and the page's Content-Security-Policy ('self') refuses.
 */
function answerPage(answer: IncomingMessage, status: number, res: ServerResponse): void {
  let html = '';
  answer.setEncoding('utf8');
  answer.on('data', (chunk: string) => (html += chunk));
  answer.on('end', () => {
    // Mended, the page has another length, and it came as text.
    res.writeHead(status, headersOf(answer, true, ['content-length', 'content-encoding']));
    res.end(html.replace(/(href|src)="https?:\/\/[^/"]+\//g, '$1="/'));
  });
}

/**
 * An answer's headers for the browser, without those of one hop (and `dropped`). kube-apiserver
 * sets `Cache-Control: no-cache, private` on whatever it serves before its proxy adds the
 * operator's own after it: a UI file keeps the operator's, so the page is asked for again each
 * time and its hashed assets are cached for good, as `spool dev` serves them.
 */
function headersOf(answer: IncomingMessage, uiFile: boolean, dropped: string[] = []): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined && !HOP.has(name) && !dropped.includes(name)) headers[name] = value;
  }
  const own = answer.headersDistinct['cache-control']?.at(-1);
  if (uiFile && own) headers['cache-control'] = own;
  return headers;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > BODY_LIMIT) reject(new SpoolError('usage', `the request body is over ${BODY_LIMIT} bytes`));
    });
    req.on('end', () => {
      try {
        resolve(text ? (JSON.parse(text) as unknown) : undefined);
      } catch {
        reject(new SpoolError('usage', 'the request body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message } }));
}
