import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { SpoolError, UsageError } from '../../common/errors.js';
import { serverUrl } from './http.js';
import { isCluster } from './target.js';

type Options = Record<string, string | boolean | undefined>;

/** Opens the address in the person's browser, when there is a desktop to open it on. */
function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No opener: the address is printed; that is enough.
  }
}

/**
 * `spool ui`: the web UI ([docs/ui.md](../../../docs/ui.md)). Against `spool dev` it is that
 * server's own address. On a cluster it serves a loopback proxy that forwards to the operator's
 * aggregated API through kube-apiserver as the person (src/cli/cluster/ui-proxy.ts), so RBAC
 * decides what the pages show and allow; it first asks once for the namespace's runs, and a person
 * the cluster refuses is told so on the terminal, as the pages tell them.
 */
export function registerUiCommand(program: Command): void {
  program
    .command('ui')
    .description('open the web UI: the dev server’s, or a cluster’s through a loopback proxy that acts as you')
    .option('--server <url>', 'the dev server (default $SPOOL_SERVER or http://127.0.0.1:7456)')
    .option('--kubeconfig <path>', 'a cluster: this kubeconfig (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', "a cluster: this kubeconfig context (default: the kubeconfig's current one)")
    .option('-n, --namespace <ns>', "a cluster: this namespace (default: the context's, or default)")
    .option('--port <port>', 'a cluster: the loopback port to serve on (0: any free one)', '7457')
    .option('--no-open', 'print the address only; do not open a browser')
    .action(async (options: Options) => {
      if (!isCluster(options)) {
        const server = serverUrl(typeof options.server === 'string' ? options.server : undefined);
        const healthy = await fetch(`${server}/healthz`).then(
          (response) => response.ok,
          () => false,
        );
        if (!healthy) throw new SpoolError('unavailable', `no spool dev answers at ${server}; start one with 'spool dev' (or pass --context for a cluster)`);
        process.stdout.write(`${server}/runs\n`);
        if (options.open !== false) openBrowser(`${server}/runs`);
        return;
      }
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port takes a port number, not '${String(options.port)}'`);
      const { ClusterTarget } = await import('../cluster/kube-target.js');
      const { startUiProxy } = await import('../cluster/ui-proxy.js');
      const target = new ClusterTarget(options);
      if (!(await target.servesAggregatedApi())) {
        throw new SpoolError('unavailable', `${target.describe()} does not serve the operator's aggregated API (api.hyperspool.dev), which spool ui goes through; is the operator installed and running? (kubectl get apiservice v1alpha1.api.hyperspool.dev)`);
      }
      // One read as the person before anything is served: a refusal is said here too, and the
      // pages, served all the same, say it where each is refused.
      await target.api('GET', '/runs?limit=1').catch((error: unknown) => {
        if (!(error instanceof SpoolError) || (error.kind !== 'forbidden' && error.kind !== 'unauthenticated')) throw error;
        process.stderr.write(`  spool ui: ${error.message}\n`);
      });
      const proxy = await startUiProxy({ target, port });
      process.stderr.write(`  spool ui: ${target.describe()}, namespace ${target.namespace}, as you; Ctrl-C stops it\n`);
      process.stdout.write(`${proxy.url}/runs\n`);
      if (options.open !== false) openBrowser(`${proxy.url}/runs`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await proxy.close();
    });
}
