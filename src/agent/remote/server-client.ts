import { readFileSync } from 'node:fs';
import type { Answer, Request } from '../../engine/protocol.js';
import { fetchLoaded } from '../../common/fetch-loaded.js';
import type { CallHandler } from '../socket-server.js';

/** What a pod needs to start its pass's script. */
export interface PassSpec {
  run: string;
  pass: number;
  filename: string;
  interpreter: string;
  script: string;
  input: unknown;
}

export interface ServerClientOptions {
  server: string;
  runId: string;
  pass: number;
  /** The pass's script, when the operator handed it over already (a warm pod's assignment). */
  spec?: PassSpec;
  /** The projected service-account token; read on every request since the kubelet rotates it. */
  tokenFile: string;
  /** How long to keep retrying a server that cannot be reached (a leader handing over). */
  retryForMs?: number;
  /**
   * How long one request may go unanswered. No call takes the server long; one that hangs (its
   * database connection stuck) is taken as lost, so the pass replays rather than waits for good.
   */
  requestTimeoutMs?: number;
}

/** Thrown when the server says this pass is over (or never was): the script must stop. */
export class PassEnded extends Error {}

/** Thrown when the server could not be reached, or kept answering 503, until the retries ran out. */
class Unreachable extends Error {}

/** The agent's half of the API (docs/api.md, "Agents"): one pass's calls, sent to the operator. */
export class ServerClient implements CallHandler {
  private readonly base: string;
  /**
   * A call went unanswered because the server could not be reached (or kept answering 503: its
   * database away). The script then exits 69 at that call, which says nothing about the script:
   * its exit must not be reported as the run's end (the run would fail); the pass is lost instead,
   * and the operator replays the run once its Job ends without a report.
   */
  lost = false;

  constructor(private readonly options: ServerClientOptions) {
    this.base = `${options.server.replace(/\/$/, '')}/v1/agent/runs/${encodeURIComponent(options.runId)}/passes/${options.pass}`;
  }

  /** Loads fetch as soon as the agent listens, while the kubelet still starts the script container: the script's first ask (its spec) does not wait for it. */
  static warmUp(): void {
    void fetchLoaded();
  }

  spec(): Promise<PassSpec> {
    return this.options.spec ? Promise.resolve(this.options.spec) : this.send<PassSpec>('GET', '');
  }

  async handle(request: Request): Promise<Answer> {
    try {
      return await this.send<Answer>('POST', '/calls', request);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The script cannot go on without its agent's answer; the operator replays the run elsewhere.
      if (error instanceof Unreachable) this.lost = true;
      return { status: 'error', kind: 'internal', message, exitCode: error instanceof PassEnded ? 1 : 69 };
    }
  }

  /** The script's output, for `spool logs` (the pod's own log goes when its Job is cleaned up). */
  log(piece: { text: string } | { textBase64: string }): Promise<unknown> {
    return this.send('POST', '/logs', piece);
  }

  exit(code: number | null, signal: string | null): Promise<unknown> {
    return this.send('POST', '/exit', { code, signal });
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const deadline = Date.now() + (this.options.retryForMs ?? 30_000);
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      let response: Response;
      try {
        response = await fetch(this.base + path, {
          method,
          headers: {
            // A connection per request. A kept-alive one, idle while the script works, is closed
            // by the server's idle timeout; on a loaded node that races the next call, which is
            // then cut off unanswered and, being possibly received, cannot be sent again.
            connection: 'close',
            authorization: `Bearer ${readFileSync(this.options.tokenFile, 'utf8').trim()}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 60_000),
        });
      } catch (error) {
        // Only a request that surely never arrived is sent again: a call may not be answered twice.
        if (!neverArrived(error) || Date.now() + delay > deadline) throw new Unreachable(`cannot reach the hyperspool server at ${this.options.server}: ${String(error)}${causeOf(error)}`);
        await sleep(delay);
        continue;
      }
      const payload = (await response.json().catch(() => ({}))) as T & { error?: { code: string; message: string } };
      if (response.ok) return payload;
      const message = payload.error?.message ?? `the server answered ${response.status}`;
      if (response.status === 409 || response.status === 401 || response.status === 403) throw new PassEnded(message);
      // 503: no leader is serving passes yet (a handover); nothing was done with the request.
      if (response.status !== 503) throw new Error(message);
      if (Date.now() + delay > deadline) throw new Unreachable(message);
      await sleep(delay);
    }
  }
}

/**
 * Whether the connection was never made, so the request cannot have arrived: refused, no route
 * to the Service yet (a new pod's network, endpoints being updated), the name not resolved, or
 * the connect timed out.
 */
function neverArrived(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } }).cause?.code ?? '';
  return ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'].includes(code);
}

/** fetch says only "fetch failed": what failed is in its cause. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause ? ` (${cause.code ?? cause.message ?? ''})` : '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
