import { ensureError } from '../../common/errors.js';
import { Observable, type ConfigurationOptions, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

/**
 * Per-call options for client-node's generated API objects that make the call abortable: the
 * generated methods take no AbortSignal, but a middleware can put one on the request context. A
 * leader that must give up at its renew deadline cannot wait for a request to a dead API server to
 * time out on its own.
 */
export function abortableRequest(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context: RequestContext) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
      },
    ],
    // Keeps the middleware the API object was built with (KubeConfig's), adding ours after it.
    middlewareMergeStrategy: 'append',
  };
}

/** The HTTP status of a failed client-node call (`ApiException.code`), if it got that far. */
export function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/**
 * A failed call in one line: for the API server's refusal, its Status reason and message
 * (`403 Forbidden: runs.hyperspool.dev "a" is forbidden: ...`) rather than client-node's dump of
 * body and headers (over a kilobyte); for any other error, its class and message.
 */
export function failureOf(error: unknown): { reason: string; message: string } {
  const code = httpStatus(error);
  const body = (error as { body?: unknown } | null)?.body;
  let status: { reason?: unknown; message?: unknown } | undefined;
  try {
    status = (typeof body === 'string' ? JSON.parse(body) : body) as typeof status;
  } catch {
    // not a Status
  }
  if (code !== undefined && typeof status?.reason === 'string' && status.reason) {
    return { reason: status.reason, message: `${code} ${status.reason}: ${typeof status.message === 'string' ? status.message : ''}` };
  }
  const plain = ensureError(error);
  return { reason: code !== undefined ? `HTTP${code}` : plain.constructor.name || plain.name, message: plain.message };
}
