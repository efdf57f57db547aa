import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { BlobBackend } from '../types.js';
import { type Credentials, sha256Hex, signRequest, uriEncode } from './sigv4.js';

/** Where a cluster keeps artifacts' bytes: a bucket (and a key prefix in it) on an S3-compatible server. */
export interface S3Location {
  bucket: string;
  /** Every object key starts with it ('' or ending in '/'). */
  prefix: string;
  /** http(s)://host[:port] of an S3-compatible server; absent: AWS S3 in `region`. */
  endpoint?: string;
  region: string;
  credentials: Credentials;
}

interface Response {
  status: number;
  body: Buffer;
}

const EMPTY_SHA256 = sha256Hex('');
/** DeleteObjects takes at most 1,000 keys, as does one page of ListObjectsV2. */
const PAGE = 1000;
/** A request that failed on the network or with a 5xx/503 SlowDown is tried this many times in all. */
const TRIES = 4;

/**
 * Each part is one object, `<prefix><key><part>`, written with a single PUT: parts are 512 KiB, so
 * there is no multipart upload (whose parts must be 5 MiB) and nothing is ever held but one part.
 * A part written twice is simply overwritten. Requests are signed with SigV4 (./sigv4.ts) and go
 * through one keep-alive agent. Addressing is path-style on a given endpoint (what MinIO, versitygw,
 * Ceph and the like expect) and virtual-hosted on AWS.
 */
export class S3Blobs implements BlobBackend {
  readonly kind = 's3';
  private readonly base: URL;
  private readonly pathStyle: boolean;
  private readonly agent: http.Agent;

  constructor(private readonly location: S3Location) {
    this.pathStyle = location.endpoint !== undefined;
    this.base = new URL(location.endpoint ?? `https://${location.bucket}.s3.${location.region}.amazonaws.com`);
    this.agent =
      this.base.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, maxSockets: 16 })
        : new http.Agent({ keepAlive: true, maxSockets: 16 });
  }

  /** s3://bucket/prefix, for messages. */
  describe(): string {
    return `s3://${this.location.bucket}/${this.location.prefix}`;
  }

  async writePart(key: string, part: number, bytes: Uint8Array): Promise<void> {
    await this.request(
      'PUT',
      this.objectKey(key, part),
      {},
      { 'content-type': 'application/octet-stream' },
      bytes,
      [200],
    );
  }

  async readPart(key: string, part: number): Promise<Uint8Array | null> {
    const response = await this.request('GET', this.objectKey(key, part), {}, {}, undefined, [200, 404]);
    return response.status === 404 ? null : response.body;
  }

  async deletePrefix(prefix: string): Promise<void> {
    // List a page, delete what it named, list again from the start: the listing shrinks as we go,
    // so no continuation token has to survive a deletion.
    for (;;) {
      const listed = await this.request(
        'GET',
        '',
        { 'list-type': '2', prefix: this.location.prefix + prefix, 'max-keys': String(PAGE) },
        {},
        undefined,
        [200],
      );
      const keys = [...listed.body.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) =>
        unescapeXml(match[1] ?? ''),
      );
      if (keys.length === 0) return;
      const body = Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${keys.map((key) => `<Object><Key>${escapeXml(key)}</Key></Object>`).join('')}</Delete>`,
      );
      const deleted = await this.request(
        'POST',
        '',
        { delete: '' },
        { 'content-md5': createHash('md5').update(body).digest('base64'), 'content-type': 'application/xml' },
        body,
        [200],
      );
      const failed = /<Error>[\s\S]*?<Code>([^<]*)<\/Code>[\s\S]*?<\/Error>/.exec(deleted.body.toString('utf8'));
      if (failed) throw new Error(`S3 ${this.describe()}: deleting under '${prefix}' failed: ${failed[1] ?? 'error'}`);
    }
  }

  /** Checks the bucket is there and the credentials may list it: one line to say what is wrong at start-up. */
  async check(): Promise<void> {
    await this.request(
      'GET',
      '',
      { 'list-type': '2', 'max-keys': '1', prefix: this.location.prefix },
      {},
      undefined,
      [200],
    );
  }

  close(): void {
    this.agent.destroy();
  }

  private objectKey(key: string, part: number): string {
    return `${this.location.prefix}${key}${part}`;
  }

  private async request(
    method: string,
    objectKey: string,
    query: Record<string, string>,
    headers: Record<string, string>,
    body: Uint8Array | undefined,
    expect: number[],
  ): Promise<Response> {
    let lastError: Error | undefined;
    for (let attempt = 1; attempt <= TRIES; attempt += 1) {
      try {
        const response = await this.once(method, objectKey, query, headers, body);
        if (expect.includes(response.status)) return response;
        const error = s3Error(response, `${method} ${this.describe()}${objectKey.slice(this.location.prefix.length)}`);
        if (response.status < 500) throw Object.assign(error, { final: true });
        lastError = error;
      } catch (error) {
        if ((error as { final?: boolean }).final) throw error;
        lastError = error instanceof Error ? error : new Error(String(error));
      }
      // Every call here is idempotent (PUT of the same bytes, GET, LIST, DELETE), so a retry is safe.
      if (attempt < TRIES) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
    throw lastError ?? new Error('S3 request failed');
  }

  private once(
    method: string,
    objectKey: string,
    query: Record<string, string>,
    headers: Record<string, string>,
    body: Uint8Array | undefined,
  ): Promise<Response> {
    const basePath = this.base.pathname.replace(/\/$/, '');
    const bucketPath = `${basePath}${this.pathStyle ? `/${uriEncode(this.location.bucket)}` : ''}`;
    // The bucket itself is `/bucket` path-style (no trailing slash: some servers read `/bucket/` as a key) and `/` virtual-hosted.
    const path = objectKey === '' ? bucketPath || '/' : `${bucketPath}/${uriEncode(objectKey, true)}`;
    const signed = signRequest({
      method,
      host: this.base.host,
      path,
      query,
      headers: { ...headers, ...(body ? { 'content-length': String(body.byteLength) } : {}) },
      bodySha256: body ? sha256Hex(body) : EMPTY_SHA256,
      region: this.location.region,
      credentials: this.location.credentials,
    });
    const search = Object.entries(query)
      .map(([key, value]) => (value === '' ? uriEncode(key) : `${uriEncode(key)}=${uriEncode(value)}`))
      .join('&');
    const transport = this.base.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(
        {
          method,
          protocol: this.base.protocol,
          hostname: this.base.hostname,
          port: this.base.port || undefined,
          path: search ? `${path}?${search}` : path,
          headers: signed,
          agent: this.agent,
          timeout: 60_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`S3 ${this.describe()}: no answer in 60 s`)));
      request.on('error', reject);
      request.end(body);
    });
  }
}

function s3Error(response: Response, what: string): Error {
  const text = response.body.toString('utf8');
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  return new Error(
    `S3 ${what}: HTTP ${response.status}${code ? ` ${code}` : ''}${message ? `: ${unescapeXml(message)}` : ''}`,
  );
}

function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function unescapeXml(value: string): string {
  return value.replace(
    /&(lt|gt|quot|apos|amp|#(\d+)|#x([0-9a-fA-F]+));/g,
    (_, name: string, dec?: string, hex?: string) => {
      if (dec) return String.fromCodePoint(Number(dec));
      if (hex) return String.fromCodePoint(parseInt(hex, 16));
      return { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' }[name] ?? '';
    },
  );
}
