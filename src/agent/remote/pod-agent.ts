import { createServer, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import { onLines, writeLine } from '../framing.js';
import { AgentSocket } from '../socket-server.js';
import { ServerClient, type ServerClientOptions } from './server-client.js';
import type { Assignment } from './warm-assignment.js';

export interface PodAgentOptions extends Omit<ServerClientOptions, 'runId' | 'pass'> {
  /** The spool socket scripts talk to. */
  socket: string;
  /** The socket the pass runner in the script container talks to (spec, stop, exit). */
  control: string;
  /**
   * The pass this pod serves, asked for when the pass runner first asks for the script: its Job's
   * env says at once, or (a warm pod) the operator assigns one later, and only to a pod whose
   * script container is up. Until then the runner's ask waits, and no call can come.
   */
  assignment: () => Promise<Assignment>;
}

/**
 * The agent of a pass in a pod (the native sidecar): serves the spool socket and sends every
 * durable call to the operator. The pass runner beside it starts the script; the agent tells it to
 * stop the script when a call suspends the run, and passes on how the script ended.
 */
export async function servePodAgent(options: PodAgentOptions): Promise<{ close(): Promise<void> }> {
  const { socket, control: controlPath, assignment, ...client } = options;
  let server: Promise<ServerClient> | null = null;
  const assigned = (): Promise<ServerClient> => {
    if (server) return server;
    server = assignment().then((pass) => new ServerClient({ ...client, ...pass }));
    // An assignment that never comes (the pod deleted while it waited) is the caller's to report.
    server.catch(() => undefined);
    return server;
  };
  const runners = new Set<Socket>();
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    for (const runner of runners) writeLine(runner, { stop: true });
  };

  const control = createServer((runner) => {
    runners.add(runner);
    runner.on('close', () => runners.delete(runner));
    runner.on('error', () => undefined);
    if (stopped) writeLine(runner, { stop: true });
    // Output goes to the server in order and unanswered; the script's end only after all of it.
    let logs: Promise<unknown> = Promise.resolve();
    onLines(runner, (line) => {
      const message = parseControl(line);
      if (message?.verb === 'log' && (typeof message.text === 'string' || typeof message.textBase64 === 'string')) {
        const piece = typeof message.textBase64 === 'string' ? { textBase64: message.textBase64 } : { text: String(message.text) };
        logs = logs.then(async () => (await assigned()).log(piece)).catch((error: unknown) => process.stderr.write(`spool agent: could not send output: ${String(error)}\n`));
        return;
      }
      const ready = message?.verb === 'exit' ? logs : Promise.resolve();
      void ready.then(() => answerRunner(assigned, line)).then((answer) => writeLine(runner, answer));
    });
  });
  for (const path of [controlPath, socket]) rmSync(path, { force: true });
  // The control socket last: `spool pass` (the script container, started beside this one with no
  // probe to hold it back) waits for it, and once it answers the spool socket is served already.
  const calls = new AgentSocket({ handle: async (request) => (await assigned()).handle(request) }, stop);
  await calls.listen(socket);
  await listen(control, controlPath);
  ServerClient.warmUp();
  return {
    async close() {
      await calls.close();
      await new Promise<void>((resolve) => control.close(() => resolve()));
    },
  };
}

async function answerRunner(assigned: () => Promise<ServerClient>, line: string): Promise<unknown> {
  try {
    const server = await assigned();
    const message = JSON.parse(line) as { verb?: string; code?: number | null; signal?: string | null };
    if (message.verb === 'spec') return { spec: await server.spec() };
    if (message.verb === 'exit') {
      if (server.lost) {
        process.stderr.write('spool agent: a call of this pass could not reach the hyperspool server: the pass is lost, and the run replays\n');
        return { ok: true };
      }
      await server.exit(message.code ?? null, message.signal ?? null);
      return { ok: true };
    }
    return { error: `unknown control message ${line}` };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function parseControl(line: string): { verb?: string; text?: unknown; textBase64?: unknown } | null {
  try {
    return JSON.parse(line) as { verb?: string; text?: unknown; textBase64?: unknown };
  } catch {
    return null;
  }
}

function listen(server: ReturnType<typeof createServer>, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
}
