import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

export interface Exchange {
  request: Record<string, unknown>;
  /** null: close the connection instead of answering. */
  reply: Record<string, unknown> | null;
}

/**
 * A scripted agent on a real unix socket: it takes the exchanges in order, checks each request line
 * against the script (as JSON values) and answers the scripted reply. Whatever does not match the
 * script is kept in `problems` rather than thrown, so a test reports it beside the call's outcome.
 */
export class FakeAgent {
  readonly path: string;
  readonly received: unknown[] = [];
  readonly problems: string[] = [];
  connections = 0;
  private readonly dir: string;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly closed: Promise<void>[] = [];
  private next = 0;

  private constructor(private readonly exchanges: Exchange[]) {
    this.dir = mkdtempSync(join(tmpdir(), 'spool-sdk-ts-'));
    this.path = join(this.dir, 'agent.sock');
    this.server = createServer((socket) => this.serve(socket));
  }

  static async start(exchanges: Exchange[], listen = true): Promise<FakeAgent> {
    const agent = new FakeAgent(exchanges);
    if (listen) await agent.listen();
    return agent;
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.path, resolve));
  }

  /** Resolves once every connection the SDK opened has closed, so everything it sent has arrived. */
  async drained(): Promise<void> {
    await Promise.all(this.closed);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private serve(socket: Socket): void {
    this.connections++;
    this.sockets.add(socket);
    this.closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
    socket.setEncoding('utf8');
    let buffered = '';
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        this.answer(socket, line);
      }
    });
    socket.on('error', () => undefined);
  }

  private answer(socket: Socket, line: string): void {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      this.problems.push(`a line that is not JSON: ${line}`);
      return;
    }
    this.received.push(request);
    const exchange = this.exchanges[this.next++];
    if (!exchange) {
      this.problems.push(`sent after the last exchange: ${line}`);
      return;
    }
    if (!isDeepStrictEqual(request, exchange.request)) {
      this.problems.push(`request ${this.next}: sent ${line}, expected ${JSON.stringify(exchange.request)}`);
    }
    if (exchange.reply === null) socket.destroy();
    else socket.write(`${JSON.stringify(exchange.reply)}\n`);
  }
}
