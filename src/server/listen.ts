import { createServer, type RequestListener, type Server } from 'node:http';
import { SpoolError } from '../common/errors.js';

/**
 * Serves `handler` on host:port, answering once the socket is bound. Not express's app.listen: it
 * passes a bind error to the same callback as success, so a busy port looked like "listening".
 */
export function listen(handler: RequestListener, port: number, host: string, portFlag: string): Promise<Server> {
  const server = createServer(handler);
  return new Promise<Server>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new SpoolError('unavailable', `port ${port} on ${host} is in use (by another spool dev?); pick another with ${portFlag}`)
          : error,
      );
    });
    server.listen(port, host, () => resolve(server));
  });
}
