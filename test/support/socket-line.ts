import { connect } from 'node:net';

/** One NDJSON line to a unix socket (an agent's spool or control socket), and the first line it answers. */
export function askSocket(path: string, message: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = connect(path, () => socket.write(`${JSON.stringify(message)}\n`));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (!text.includes('\n')) return;
      socket.destroy();
      resolve(JSON.parse(text.split('\n')[0] ?? '') as Record<string, unknown>);
    });
    socket.on('error', reject);
  });
}

/**
 * askSocket once its server listens: a Unix socket's file appears at bind(), a moment before
 * listen() (a connect then is refused), so a test that waits for the file alone races the server
 * on a loaded machine. A refused connect sent nothing, so it is safe to try again.
 */
export async function askSocketWhenListening(path: string, message: unknown, withinMs = 10_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await askSocket(path, message);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ECONNREFUSED' && code !== 'ENOENT') || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
