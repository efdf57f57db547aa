import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server got. */
export interface Received {
  path: string;
  key: string | null;
  body: string;
  /** When it arrived (Date.now()). */
  at: number;
}

/**
 * A real local HTTP server for graph tests that counts requests per Idempotency-Key and how many
 * are under way at once. What a path does comes from its query: `fail=N` answers the first N
 * requests of each key 503; `hold=1` never answers the first request of each key (the test kills
 * the pass meanwhile); `ms=N` answers after N ms; `size=N` pads the answer with N bytes; /missing answers 404. Every answer is JSON: the key, how many times
 * that key came, and the request's body.
 */
export async function startKeyServer() {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const held: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://x');
      const key = request.headers['idempotency-key'];
      const entry = { path: url.pathname, key: typeof key === 'string' ? key : null, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      const seen = received.filter((other) => other.path === entry.path && other.key === entry.key).length;
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const answer = (status: number) => {
        inFlight -= 1;
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ key: entry.key, seen, body: entry.body, padding: 'x'.repeat(Number(url.searchParams.get('size') ?? 0)) }));
      };
      if (url.searchParams.get('hold') === '1' && seen === 1) {
        held.push(response);
        return;
      }
      const status = url.pathname === '/missing' ? 404 : seen <= Number(url.searchParams.get('fail') ?? 0) ? 503 : 200;
      const ms = Number(url.searchParams.get('ms') ?? 0);
      if (ms > 0) setTimeout(() => answer(status), ms);
      else answer(status);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** Requests to a path, by key: how many times each key came. */
    keys(path: string): Map<string | null, number> {
      const counts = new Map<string | null, number>();
      for (const entry of received) if (entry.path === path) counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
      return counts;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
