import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';

const run = promisify(execFile);

/**
 * A throwaway Kubernetes control plane: etcd and kube-apiserver on loopback, in a temp directory
 * of its own. No controllers and no nodes run, so: Pods get no ServiceAccount of their own (the
 * ServiceAccount admission plugin is off; create one and name it), deleted namespaces stay
 * Terminating, nothing is garbage-collected. See hack/control-plane.sh.
 */
export interface ControlPlane {
  /** Path of a kubeconfig with cluster-admin (current-context set). */
  kubeconfigPath: string;
  /** The pinned kubectl, built beside kube-apiserver (not whatever kubectl is on PATH). */
  kubectl: string;
  /** https://127.0.0.1:PORT */
  server: string;
  /** A @kubernetes/client-node KubeConfig loaded from kubeconfigPath. */
  kubeConfig(): KubeConfig;
  /** Stops kube-apiserver and starts it again on the same port and etcd (for informer-survival tests). */
  restartApiServer(): Promise<void>;
  stop(): Promise<void>;
}

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const buildScript = join(repo, 'hack', 'build-k8s.sh');
const planeScript = join(repo, 'hack', 'control-plane.sh');

const HOW_TO_BUILD =
  'build them with `npm run kube:build` (hack/build-k8s.sh: needs Go and the Go module proxy; ' +
  'minutes on a cold cache, .ci/run does it before the tests)';

function describeFailure(error: unknown): string {
  const failed = error as { stderr?: string; stdout?: string; message?: string };
  return [failed.message, failed.stdout, failed.stderr].filter(Boolean).join('\n');
}

let binaries: Promise<string> | undefined;

/**
 * The pinned kube-apiserver and etcd: hack/build-k8s.sh answers at once when they are built, and
 * builds them when not (slow: CI builds them before the tests so that this never happens there).
 */
function ensureBinaries(): Promise<string> {
  binaries ??= run('bash', [buildScript, 'kube-apiserver', 'etcd', 'kubectl'], { encoding: 'utf8', maxBuffer: 64 << 20 }).then(
    ({ stdout }) => stdout.trim().split('\n').pop() ?? '',
    (error: unknown) => {
      binaries = undefined;
      throw new Error(`the Kubernetes test binaries are missing and could not be built; ${HOW_TO_BUILD}\n${describeFailure(error)}`);
    },
  );
  return binaries;
}

/** The pinned kubectl (for `kubectl kustomize` without a control plane), built if it is not yet. */
export async function pinnedKubectl(): Promise<string> {
  return join(await ensureBinaries(), 'kubectl');
}

/** `count` distinct ports that were free a moment ago (all held open at once, so never the same). */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((server) => {
      const address = server.address();
      return typeof address === 'object' && address ? address.port : 0;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

/**
 * Starts etcd and kube-apiserver for one test file (call it in beforeAll with a long timeout, in
 * case the binaries still have to be built; call `stop` in afterAll).
 */
/**
 * The certificates and keys every test plane makes the same way (the CA, the serving certificate
 * for 127.0.0.1, the admin's, the service-account key): made once per machine and copied into each
 * new plane's directory, where hack/control-plane.sh keeps a `pki/` it finds whole. Making them
 * took about a second of every plane's start (a dozen openssl commands), and some 40 planes
 * start in a whole `npm test`.
 */
const SHARED_PKI = join(tmpdir(), `spool-kube-pki-${process.getuid?.() ?? 0}-${hashOfFiles(planeScript, join(dirname(planeScript), 'lib', 'common.sh'))}`);

/** Of the scripts that make the certificates: a change to them makes new ones. */
function hashOfFiles(...files: string[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(readFileSync(file));
  return hash.digest('hex').slice(0, 12);
}

function reuseCertificates(dir: string): void {
  if (existsSync(join(SHARED_PKI, 'done'))) cpSync(SHARED_PKI, join(dir, 'pki'), { recursive: true });
}

function keepCertificates(dir: string): void {
  if (existsSync(join(SHARED_PKI, 'done'))) return;
  // Copied aside, then renamed into place: another test process may be doing the same.
  const copy = `${SHARED_PKI}.${process.pid}`;
  cpSync(join(dir, 'pki'), copy, { recursive: true });
  try {
    renameSync(copy, SHARED_PKI);
  } catch {
    rmSync(copy, { recursive: true, force: true });
  }
}

export async function startControlPlane(): Promise<ControlPlane> {
  const bin = await ensureBinaries();

  // A port can be taken between being picked and being bound: a failed start is tried again
  // with new ports and a new directory.
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'spool-kube-'));
    const [etcdClient, etcdPeer, apiserver] = await freePorts(3);
    const env = {
      ...process.env,
      HYPERSPOOL_PLANE_DIR: dir,
      // The script's watchdog stops the plane when this process is gone, even if it was killed.
      HYPERSPOOL_PLANE_OWNER_PID: String(process.pid),
      ETCD_CLIENT_PORT: String(etcdClient),
      ETCD_PEER_PORT: String(etcdPeer),
      APISERVER_PORT: String(apiserver),
    };
    const plane = (verb: string, ...args: string[]) =>
      run('bash', [planeScript, verb, ...args], { env, encoding: 'utf8', maxBuffer: 64 << 20 });

    // A test process that exits without afterAll must not leave a plane behind.
    const onExit = (): void => {
      try {
        execFileSync('bash', [planeScript, 'down', '--purge'], { env, stdio: 'ignore' });
      } catch {
        // already down
      }
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', onExit);

    try {
      reuseCertificates(dir);
      await plane('up');
      keepCertificates(dir);
    } catch (error) {
      process.removeListener('exit', onExit);
      onExit();
      if (attempt < 3) continue;
      throw new Error(`could not start a test Kubernetes control plane:\n${describeFailure(error)}`);
    }

    const kubeconfigPath = join(dir, 'kubeconfig');
    let stopped = false;
    return {
      kubeconfigPath,
      kubectl: join(bin, 'kubectl'),
      server: `https://127.0.0.1:${apiserver}`,
      kubeConfig() {
        const config = new KubeConfig();
        config.loadFromFile(kubeconfigPath);
        return config;
      },
      async restartApiServer() {
        try {
          await plane('restart-apiserver');
        } catch (error) {
          throw new Error(`could not restart kube-apiserver:\n${describeFailure(error)}`);
        }
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        process.removeListener('exit', onExit);
        try {
          await plane('down', '--purge');
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  }
}
