import { createServer, type Server, type Socket } from 'node:net';
import type { Answer, Request } from '../engine/protocol.js';
import { EXIT } from '../engine/protocol.js';
import { onLines, writeLine } from './framing.js';

/** Whatever answers a pass's durable calls: the engine's Pass here, or the operator for a pod. */
export interface CallHandler {
  handle(request: Request): Promise<Answer>;
}

/**
 * The spool socket of one pass. Requests are answered one at a time in arrival order, since call
 * identity is the order calls are reached in.
 */
export class AgentSocket {
  private readonly server: Server;
  private queue: Promise<void> = Promise.resolve();
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly pass: CallHandler,
    /** Called once the script must be ended: it suspended or diverged from its journal. */
    private readonly onStop: () => void,
  ) {
    this.server = createServer((socket) => this.accept(socket));
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(path, () => resolve());
    });
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    onLines(socket, (line) => {
      this.queue = this.queue.then(() => this.answer(socket, line));
    });
  }

  private async answer(socket: Socket, line: string): Promise<void> {
    let answer: Answer;
    try {
      answer = await this.pass.handle(JSON.parse(line) as Request);
    } catch {
      answer = { status: 'error', kind: 'usage', message: 'malformed request: not one JSON object per line', exitCode: EXIT.usage };
    }
    writeLine(socket, answer);
    if (answer.status === 'suspended' || (answer.status === 'error' && answer.kind === 'determinism')) this.onStop();
  }
}
