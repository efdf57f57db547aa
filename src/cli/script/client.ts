import { connect, type Socket } from 'node:net';
import { RetryableError } from '../../common/errors.js';
import type { Answer, Request } from '../../engine/protocol.js';

/** The agent could not be reached, or went away mid-call: exit 69, the run replays elsewhere. */
export class AgentUnavailable extends RetryableError {
  constructor(message: string) {
    super('unavailable', message);
  }
}

/** One connection to the pass's agent; requests on it are answered in order. */
export class AgentClient {
  private buffered = '';
  private readonly waiting: ((line: string | null) => void)[] = [];

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      let newline = this.buffered.indexOf('\n');
      while (newline >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.waiting.shift()?.(line);
        newline = this.buffered.indexOf('\n');
      }
    });
    const gone = (): void => {
      for (const resolve of this.waiting.splice(0)) resolve(null);
    };
    socket.on('close', gone);
    socket.on('error', gone);
  }

  static connect(path: string): Promise<AgentClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      socket.once('connect', () => resolve(new AgentClient(socket)));
      socket.once('error', (error) => reject(new AgentUnavailable(`cannot reach the agent at ${path}: ${error.message}`)));
    });
  }

  request(request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.push((line) => {
        if (line === null) reject(new AgentUnavailable('the agent went away during the call'));
        else resolve(JSON.parse(line) as Answer);
      });
      this.socket.write(`${JSON.stringify(request)}\n`);
    });
  }

  close(): void {
    this.socket.end();
  }
}
