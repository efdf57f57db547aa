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
