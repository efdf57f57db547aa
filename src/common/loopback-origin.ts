/**
 * Who may reach a server that trusts its loopback port (`spool dev`, `spool ui`): requests for a
 * loopback name only (a rebound DNS name is refused), and changes only from a page of this very
 * server. An origin is scheme, host and port: a page served by another local port is another site,
 * and may not cancel a run here (a form post or a `text/plain` fetch needs no preflight).
 */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** The host part of a Host header or an origin's host: `127.0.0.1:7456` → `127.0.0.1`, `[::1]:80` → `[::1]`. */
function hostnameOf(value: string): string {
  const host = value.startsWith('[') ? value.slice(0, value.indexOf(']') + 1) : (value.split(':')[0] ?? '');
  return host.toLowerCase();
}

/** The port of a Host header, with http's default. */
function portOf(host: string): string {
  const at = host.lastIndexOf(':');
  return at > host.lastIndexOf(']') && at >= 0 ? host.slice(at + 1) : '80';
}

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(hostnameOf(host));
}

/** Whether a page of `origin` is one this server (reached as `host`) served: http, a loopback name, the same port. */
export function isOwnOrigin(origin: string, host: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.protocol === 'http:' && isLoopbackHost(url.host) && (url.port || '80') === portOf(host);
}
