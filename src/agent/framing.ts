import type { Socket } from 'node:net';

/** Newline-delimited JSON: one request or answer per line (docs/protocol.md). */
export function onLines(socket: Socket, handle: (line: string) => void): void {
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim() !== '') handle(line);
      newline = buffered.indexOf('\n');
    }
  });
}

export function writeLine(socket: Socket, message: unknown): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}
