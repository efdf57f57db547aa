import { parseDuration } from '../common/duration.js';
import { oneLine } from '../common/one-line.js';
import { fetchLoaded } from '../common/fetch-loaded.js';
import type { Retry } from '../pipeline/types.js';
import { callOk, unexpected, type NodeHost, type NodeResult } from './node-host.js';

/** How long one request may take when the node's config gives no timeout. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface HttpConfig {
  method?: unknown;
  url?: unknown;
  headers?: unknown;
  body?: unknown;
  expect?: unknown;
  timeout?: unknown;
}

/** What one attempt came to: the response, and whether another attempt may do better. */
interface Attempt {
  result: NodeResult;
  retryable: boolean;
}

/**
 * An http node as one durable call of the run (a `step_fn` named `node <name>`): its first pass
 * sends the request, with its retries, from this process and records the outcome; a replay returns
 * the recorded outcome without sending anything. A pass that dies before the outcome is recorded
 * leaves the call open, and the next pass sends the request again, with the same idempotency key
 * (the node's, made from the run, the node and the item: never from this pass).
 */
export async function httpNode(
  node: NodeHost,
  name: string,
  config: HttpConfig,
  retry: Retry | null,
  timeoutMs: number | null,
  beforeSend?: () => Promise<void>,
): Promise<NodeResult> {
  const answer = await node.handle({ verb: 'step_fn', name: `node ${name}` });
  if (answer.status === 'ok') return answer.value as NodeResult;
  if (answer.status !== 'execute') unexpected(answer, 'step_fn');
  const stub = node.host.stubs?.http(name.replace(/\[\d+\]$/, '')) ?? null;
  if (!stub && beforeSend) {
    // Else a rate's first request reached the server that much after the gate let it go, and the
    // second close behind it (30 ms apart for a 200 ms gap).
    await fetchLoaded();
    await beforeSend();
  }
  const sent = stub ? responseOutcome(config, stub.status, stub.headers ?? {}, stub.body ?? null).result : await attempts(config, retry, timeoutMs);
  const result = recordable(sent, node.host.maxResultBytes);
  await callOk(node, { verb: 'done', position: answer.position, value: result });
  return result;
}

/** A response too big to record fails the node, saying so, rather than the run's pass. */
function recordable(result: NodeResult, maxBytes: number): NodeResult {
  const size = Buffer.byteLength(JSON.stringify(result));
  if (size <= maxBytes) return result;
  return { status: 'failed', output: null, error: `the response is ${size} bytes recorded, over the limit of ${maxBytes} (SPOOL_MAX_RESULT_BYTES)` };
}

/**
 * Sends the request until it succeeds, fails for good (a 4xx, a status `expect` does not list) or
 * runs out of attempts; 5xx answers and connection errors are tried again after the backoff,
 * doubling, waited out in this process. The node's timeout bounds them all.
 */
async function attempts(config: HttpConfig, retry: Retry | null, timeoutMs: number | null): Promise<NodeResult> {
  const deadline = timeoutMs === null ? null : Date.now() + timeoutMs;
  const tries = retry?.attempts ?? 1;
  let last: Attempt = { result: { status: 'failed', output: null, error: 'not sent' }, retryable: false };
  for (let attempt = 1; attempt <= tries; attempt++) {
    last = await send(config, deadline);
    if (!last.retryable || attempt === tries) break;
    const backoff = (retry?.backoffMs ?? 0) * 2 ** (attempt - 1);
    if (deadline !== null && Date.now() + backoff >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, backoff));
  }
  return last.result;
}

async function send(config: HttpConfig, deadline: number | null): Promise<Attempt> {
  const method = typeof config.method === 'string' ? config.method.toUpperCase() : 'GET';
  const url = String(config.url ?? '');
  const headers = new Headers();
  if (config.headers && typeof config.headers === 'object') {
    for (const [key, value] of Object.entries(config.headers)) if (value !== null && value !== undefined) headers.set(key, text(value));
  }
  let body: string | undefined;
  if (config.body !== undefined && config.body !== null) {
    body = typeof config.body === 'string' ? config.body : JSON.stringify(config.body);
    if (typeof config.body !== 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  const requestMs = typeof config.timeout === 'string' ? parseDuration(config.timeout) : DEFAULT_REQUEST_TIMEOUT_MS;
  const waitMs = deadline === null ? requestMs : Math.max(0, Math.min(requestMs, deadline - Date.now()));
  let response: Response;
  let responseText: string;
  try {
    response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(waitMs), redirect: 'follow' });
    responseText = await response.text();
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const what = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${waitMs}ms` : `${error instanceof Error ? error.message : String(error)}${cause}`;
    return { result: { status: 'failed', output: null, error: oneLine(`${method} ${url}: ${what}`) }, retryable: true };
  }
  const answered = parsed(responseText, response.headers.get('content-type'));
  return responseOutcome(config, response.status, Object.fromEntries(response.headers.entries()), answered);
}

/** What a response comes to, by its status and the node's `expect` (a stubbed one too: `spool test`). */
function responseOutcome(config: HttpConfig, status: number, headers: Record<string, string>, body: unknown): Attempt {
  const method = typeof config.method === 'string' ? config.method.toUpperCase() : 'GET';
  const output = { status, headers, body };
  const expect = Array.isArray(config.expect) ? config.expect : null;
  const ok = expect ? expect.includes(status) : status >= 200 && status < 300;
  if (ok) return { result: { status: 'succeeded', output, error: null }, retryable: false };
  const error = `${method} ${String(config.url ?? '')} answered ${status}${expect ? ` (expected ${expect.join(', ')})` : ''}`;
  return { result: { status: 'failed', output, error }, retryable: status >= 500 };
}

/** A JSON body as its value, so expressions can read into it; anything else as text. */
function parsed(body: string, contentType: string | null): unknown {
  if (!/json/i.test(contentType ?? '')) return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
