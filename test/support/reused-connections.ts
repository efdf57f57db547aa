import type { IncomingMessage } from 'node:http';

/**
 * For a test server that plays the operator under load: a kept-alive connection reused just as the
 * server's idle timeout closes it, so the request on it is cut off unanswered. The function this
 * returns cuts off every request that comes on a connection already used, and says whether it did.
 */
export function cutOffReusedConnections(): (request: IncomingMessage) => boolean {
  const requestsOn = new WeakMap<object, number>();
  return (request) => {
    const seen = (requestsOn.get(request.socket) ?? 0) + 1;
    requestsOn.set(request.socket, seen);
    if (seen === 1) return false;
    request.socket.destroy();
    return true;
  };
}
