import type { TLSSocket } from 'node:tls';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Request } from 'express';
import { HttpError } from '../../server/http-error.js';

/**
 * How kube-apiserver passes on who a person is when it proxies their request to an aggregated API
 * server: it authenticates them (certificates, tokens, OIDC, exec plugins: whatever the kubeconfig
 * uses), then connects with its front-proxy client certificate and names the user in headers. The
 * headers are believed only on a connection whose client certificate chains to the requestheader
 * CA and, when the cluster lists them, has one of the allowed common names. All of it is published
 * in kube-system's extension-apiserver-authentication ConfigMap, as every aggregated server reads it.
 */
export interface FrontProxy {
  /** PEM of the CA the front-proxy client certificate is signed by (the TLS server's `ca`). */
  clientCa: string;
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

export interface FrontProxyUser {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

const CONFIG_MAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

/** The cluster's front-proxy settings, or an error saying what is missing. */
export async function readFrontProxy(core: CoreV1Api): Promise<FrontProxy> {
  const map = await core.readNamespacedConfigMap(CONFIG_MAP);
  const data = map.data ?? {};
  const list = (key: string): string[] => {
    try {
      const value = JSON.parse(data[key] ?? '[]') as unknown;
      return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
    } catch {
      return [];
    }
  };
  const clientCa = data['requestheader-client-ca-file'];
  if (!clientCa) {
    throw new Error(
      `${CONFIG_MAP.namespace}/${CONFIG_MAP.name} has no requestheader-client-ca-file: kube-apiserver runs without --requestheader-client-ca-file, so it cannot pass people's identity on to an aggregated API`,
    );
  }
  return {
    clientCa,
    allowedNames: list('requestheader-allowed-names'),
    usernameHeaders: list('requestheader-username-headers'),
    uidHeaders: list('requestheader-uid-headers'),
    groupHeaders: list('requestheader-group-headers'),
    extraHeaderPrefixes: list('requestheader-extra-headers-prefix'),
  };
}

/**
 * The person a request is from, as kube-apiserver named them: only on a TLS connection whose
 * client certificate the server verified against the requestheader CA (`authorized`) and whose
 * common name is allowed. Anything else is refused, whatever its headers say.
 */
export function frontProxyUser(req: Request, proxy: FrontProxy): FrontProxyUser {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) throw new HttpError(401, 'unauthenticated', 'only kube-apiserver may call this API (a front-proxy client certificate is required)');
  const commonName = socket.getPeerCertificate().subject?.CN;
  const name = Array.isArray(commonName) ? commonName[0] : commonName;
  if (proxy.allowedNames.length > 0 && !proxy.allowedNames.includes(name ?? '')) {
    throw new HttpError(401, 'unauthenticated', `the client certificate's common name ${name ?? '(none)'} is not one of the cluster's requestheader-allowed-names`);
  }
  const first = (headers: string[]): string | undefined => headers.map((header) => req.get(header)).find((value) => value);
  const username = first(proxy.usernameHeaders);
  if (!username) throw new HttpError(401, 'unauthenticated', 'kube-apiserver named no user');
  const uid = first(proxy.uidHeaders);
  const groups = proxy.groupHeaders.flatMap((header) => headerValues(req, header));
  const extra: Record<string, string[]> = {};
  for (const prefix of proxy.extraHeaderPrefixes.map((p) => p.toLowerCase())) {
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const header = (req.rawHeaders[i] ?? '').toLowerCase();
      if (!header.startsWith(prefix)) continue;
      // The key is percent-encoded in the header name (kube-apiserver's own rule).
      const key = decodeURIComponent(header.slice(prefix.length));
      extra[key] = [...(extra[key] ?? []), req.rawHeaders[i + 1] ?? ''];
    }
  }
  return { username, ...(uid ? { uid } : {}), groups, extra };
}

/** Each value of a header that may come several times (req.headers would join them with ', '). */
function headerValues(req: Request, header: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === header.toLowerCase()) values.push(req.rawHeaders[i + 1] ?? '');
  }
  return values;
}
