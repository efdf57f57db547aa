import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3 requests (the signed-header form, not presigned URLs). Written
 * here rather than taken from the AWS SDK: the backend needs four calls, and the SDK is megabytes.
 * The body's sha256 is always given (parts are small and already in memory), so no request is
 * sent UNSIGNED-PAYLOAD.
 */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (an assumed role, IRSA) carry a token. */
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  /** The host header as sent (host[:port]). */
  host: string;
  /** The path, already URI-encoded as it goes on the wire. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  bodySha256: string;
  region: string;
  credentials: Credentials;
  now?: Date;
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** RFC 3986 encoding as SigV4 wants it: only A-Z a-z 0-9 - . _ ~ stay as they are. */
export function uriEncode(value: string, keepSlash = false): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const ch = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(ch) || (keepSlash && ch === '/')) out += ch;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function canonicalQuery(query: Record<string, string>): string {
  return Object.keys(query)
    .map((key) => [uriEncode(key), uriEncode(query[key] ?? '')] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

/** The headers to send: the caller's, plus host, x-amz-date, x-amz-content-sha256 and Authorization. */
export function signRequest(input: SignInput): Record<string, string> {
  const now = input.now ?? new Date();
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(input.headers).map(([key, value]) => [key.toLowerCase(), value.trim()])),
    host: input.host,
    'x-amz-date': amzDate,
    'x-amz-content-sha256': input.bodySha256,
  };
  if (input.credentials.sessionToken) headers['x-amz-security-token'] = input.credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonical = [
    input.method,
    input.path,
    canonicalQuery(input.query),
    ...names.map((name) => `${name}:${headers[name]}`),
    '',
    signedHeaders,
    input.bodySha256,
  ].join('\n');
  const scope = `${day}/${input.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonical)].join('\n');
  const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${input.credentials.secretAccessKey}`, day), input.region), 's3'),
    'aws4_request',
  );
  const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
