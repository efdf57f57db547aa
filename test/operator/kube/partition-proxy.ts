import { connect, createServer, type Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * A TCP proxy in front of kube-apiserver that a test can cut and heal: a network partition
 * between one client and the API server, while other clients (the test's own) still reach it.
 * Unlike restarting the API server, it says exactly when the client is cut off, so a test can
 * change the world while the client cannot see it.
 */
export interface PartitionProxy {
  /** A kubeconfig like `makeConfig()`'s whose server is the proxy. */
  kubeConfig: KubeConfig;
  /** Drops every open connection; new ones are accepted and dropped at once. */
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startPartitionProxy(makeConfig: () => KubeConfig): Promise<PartitionProxy> {
  const cluster = makeConfig().getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const target = new URL(cluster.server);
  const sockets = new Set<Socket>();
  let partitioned = false;

  const server = createServer((client) => {
    if (partitioned) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const proxied = makeConfig();
  proxied.loadFromOptions({
    clusters: proxied.clusters.map((each) => ({ ...each, server: `https://127.0.0.1:${port}` })),
    users: proxied.users,
    contexts: proxied.contexts,
    currentContext: proxied.currentContext,
  });

  return {
    kubeConfig: proxied,
    cut() {
      partitioned = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    heal() {
      partitioned = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
