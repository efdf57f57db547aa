import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
import { StoreUnavailableError } from '../../src/store/unavailable.js';

/**
 * A database address that takes the connection and never answers: what a client meets while a
 * database pod's address still leads somewhere but nothing there speaks PostgreSQL any more.
 */
describe('a database that never answers', () => {
  let silent: Server;
  const sockets: Socket[] = [];
  let url = '';

  beforeAll(async () => {
    silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    url = `postgres://hyperspool:secret@127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hyperspool`;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  // Without a connect timeout this waits for good, and the test's timeout fails it.
  it('given a connection that hangs, then the store says the database is unavailable, instead of waiting for good', async () => {
    const error = await openPostgresStore(url).then(
      () => null,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
  }, 60_000);
});
