import { connect, type Socket } from 'node:net';
import { AgentUnavailable, ScriptError } from './errors.js';
import type { AgentInfo, Answer, Request } from './protocol.js';

/**
 * The one connection of this process to its pass's agent (`$SPOOL_SOCKET`). A durable call's
 * identity is its place in the order the agent receives requests, so every call goes over this
 * connection, and a request once written is never written again: after a drop only a replay of the
 * whole script may run a call again.
 */
export class Connection {
  private buffered = '';
  private readonly waiting: { resolve: (answer: Answer) => void; reject: (error: Error) => void }[] = [];
  private gone: string | null = null;
  /** `agent.info`, asked at most once per connection (capabilities.ts). */
  info: Promise<AgentInfo> | null = null;

  constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    // An idle connection must not keep a finished script alive; it is referenced only while a
    // request waits for its answer.
    socket.unref();
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error) => this.drop(`the agent went away during the call (${error.message})`));
    socket.on('close', () => this.drop('the agent went away during the call'));
  }

  request(request: Request): Promise<Answer> {
    if (this.gone !== null) return Promise.reject(new AgentUnavailable(this.gone));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.ref();
      this.socket.write(`${JSON.stringify(request)}\n`);
    });
  }

  close(): void {
    this.drop('the connection to the agent was closed');
    this.socket.destroy();
  }

  private receive(chunk: string): void {
    this.buffered += chunk;
    for (let newline = this.buffered.indexOf('\n'); newline >= 0; newline = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      const waiter = this.waiting.shift();
      if (this.waiting.length === 0) this.socket.unref();
      if (!waiter) continue;
      try {
        waiter.resolve(JSON.parse(line) as Answer);
      } catch {
        waiter.reject(new ScriptError('internal', `the agent answered with a line that is not JSON: ${line.slice(0, 200)}`));
      }
    }
  }

  private drop(reason: string): void {
    if (this.gone === null) this.gone = reason;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new AgentUnavailable(this.gone));
    this.socket.unref();
  }
}

function envNumber(name: string, fallback: number, min: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  return Number.isFinite(value) && value >= min ? value : fallback;
}

function connectOnce(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Connects, retrying only this phase: nothing has been sent yet, so trying again is safe. */
async function open(): Promise<Connection> {
  const path = process.env.SPOOL_SOCKET;
  if (!path) {
    throw new AgentUnavailable(
      'SPOOL_SOCKET is not set: durable calls run inside a script started by spool run, spool submit or a cluster run',
    );
  }
  const attempts = Math.floor(envNumber('SPOOL_CONNECT_ATTEMPTS', 5, 1));
  let backoffMs = envNumber('SPOOL_CONNECT_BACKOFF_MS', 50, 0);
  for (let attempt = 1; ; attempt++) {
    try {
      return new Connection(await connectOnce(path));
    } catch (error) {
      if (attempt >= attempts) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new AgentUnavailable(`cannot reach the agent at ${path} after ${attempts} attempts: ${reason}`);
      }
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs *= 2;
    }
  }
}

let current: Promise<Connection> | null = null;

/** This process's connection, opened by the first durable call. */
export function agent(): Promise<Connection> {
  current ??= open();
  return current;
}

/** Sends one request on this process's connection and answers the agent's reply. */
export async function send(request: Request): Promise<Answer> {
  return (await agent()).request(request);
}

/**
 * Closes and forgets the connection, so the next call opens a new one. For tests, which run many
 * scripted agents in one process; a script never needs it.
 */
export async function resetConnection(): Promise<void> {
  const previous = current;
  current = null;
  if (previous) (await previous.catch(() => null))?.close();
}
