import { request } from 'node:https';
import { request as plainRequest, type RequestOptions } from 'node:http';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { RetryableError, SpoolError, UsageError, ensureError, errorOfAnswer } from '../../common/errors.js';
import { USER_AUTHORIZATION } from '../../server/access.js';
import { GROUP, RUN, VERSION, type Run } from '../../operator/api/generated.js';
import { RUN_KEY, runIdOf, runKey } from '../../operator/naming.js';
import { aggregatedDiscoveryPath, aggregatedRequest } from './aggregated-path.js';
import type { Target } from '../control/target-types.js';
import { httpStatus } from '../../operator/kube/request-options.js';

export interface ClusterOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** `NAMESPACE/SERVICE` of the operator's API (default hyperspool-system/hyperspool-operator). */
  operator?: string;
  /** Who to act as: Kubernetes impersonation, which the API server allows only where RBAC does. */
  as?: string;
}

/**
 * A cluster as the CLI sees it, through the kubeconfig like kubectl: Runs and Workflows through the
 * API server as the user; the operator's API (people's verbs on runs, event emit, handler and
 * schedule lists, state) through its aggregated API (api.hyperspool.dev), which the API server
 * reaches as the user whatever their kubeconfig authenticates with. An install without the
 * aggregated API is reached through the API server's service proxy, with the user's own token in a
 * header the proxy passes on.
 */
export class ClusterTarget implements Target {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly custom: CustomObjectsApi;
  private readonly operatorNamespace: string;
  private readonly operatorService: string;
  /** Run names by run id, as runId() found them: the aggregated API names runs as RBAC does. */
  private readonly runNames = new Map<string, string>();
  private readonly as: string | undefined;

  constructor(options: ClusterOptions) {
    this.kubeConfig = new KubeConfig();
    try {
      if (options.kubeconfig) this.kubeConfig.loadFromFile(options.kubeconfig);
      else this.kubeConfig.loadFromDefault();
    } catch (error) {
      throw new UsageError(`cannot read the kubeconfig ${options.kubeconfig ?? '(default)'}: ${(error as Error).message}`);
    }
    if (options.context) {
      if (!this.kubeConfig.getContextObject(options.context)) throw new UsageError(`the kubeconfig has no context '${options.context}'`);
      this.kubeConfig.setCurrentContext(options.context);
    }
    if (!this.kubeConfig.getCurrentCluster()) throw new UsageError('the kubeconfig names no current cluster; pass --context');
    this.namespace = options.namespace ?? this.kubeConfig.getContextObject(this.kubeConfig.getCurrentContext())?.namespace ?? 'default';
    const [operatorNamespace = '', operatorService = ''] = (options.operator ?? 'hyperspool-system/hyperspool-operator').split('/');
    if (!operatorNamespace || !operatorService) throw new UsageError(`--operator takes NAMESPACE/SERVICE, not '${options.operator ?? ''}'`);
    this.operatorNamespace = operatorNamespace;
    this.operatorService = operatorService;
    this.custom = this.kubeConfig.makeApiClient(CustomObjectsApi);
    this.as = options.as;
  }

  describe(): string {
    return `cluster ${this.kubeConfig.getCurrentCluster()?.server ?? ''}`;
  }

  /** A Run resource name is what people type on a cluster; the API takes the run's id. */
  async runId(arg: string): Promise<string> {
    if (arg.includes(':')) return arg;
    // A run key whose Run is gone (its TTL, a history limit) still names the run in the store.
    const run = RUN_KEY.test(arg) ? await this.getRun(arg).catch((error: unknown) => (error instanceof SpoolError && error.kind === 'not_found' ? null : Promise.reject(ensureError(error)))) : await this.getRun(arg);
    if (!run) return runIdOf(this.namespace, arg);
    if (!run.status?.runId) throw new SpoolError('not_found', `Run ${arg} in namespace ${this.namespace} has not been admitted yet (is the operator running?)`);
    this.runNames.set(run.status.runId, arg);
    return run.status.runId;
  }

  /** The name of the Run of a run id (looked up by its run label when runId() did not see it). */
  async runName(runId: string): Promise<string> {
    const known = this.runNames.get(runId);
    if (known) return known;
    // No Run: the run may be archived (its Run deleted, the run kept in the store), which the
    // aggregated API finds by its key; the operator answers not found if it is not there either.
    const name = (await this.findRunName(runId)) ?? runKey(runId);
    this.runNames.set(runId, name);
    return name;
  }

  /** The name of the Run carrying a run id's run label, or null while there is none. */
  async findRunName(runId: string): Promise<string | null> {
    const [, namespace = this.namespace, key = ''] = runId.split(':');
    const list = (await this.custom
      .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: RUN.plural, labelSelector: `hyperspool.dev/run=${key}` })
      .catch((error: unknown) => {
        throw kubeError(error, `the Run of ${runId}`);
      })) as { items: Run[] };
    return list.items[0]?.metadata?.name ?? null;
  }

  async getRun(name: string): Promise<Run> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.namespace, plural: RUN.plural, name })) as Run;
    } catch (error) {
      throw kubeError(error, `Run ${name} in namespace ${this.namespace}`);
    }
  }

  async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const aggregated = await aggregatedRequest(method, path, body, this.namespace, (runId) => this.runName(runId));
    if (aggregated) {
      const answer = await this.throughApiServer<T>(aggregated.method, aggregated.path, aggregated.body);
      if (answer.served) return answer.value;
    }
    // The service proxy hands the operator the person's own token, which impersonation cannot change.
    if (this.as !== undefined) throw new UsageError(`--as needs the operator's aggregated API (api.hyperspool.dev) for this, which this cluster does not serve`);
    return this.throughServiceProxy<T>(method, path, body);
  }

  /**
   * A request to the aggregated API as the kubeconfig's user; `served: false` when this cluster
   * does not serve api.hyperspool.dev (an install from before it), so the caller goes the old way.
   */
  private async throughApiServer<T>(method: string, path: string, body: unknown): Promise<{ served: true; value: T } | { served: false }> {
    const cluster = this.kubeConfig.getCurrentCluster();
    const url = new URL(`${cluster?.server ?? ''}${path}`);
    const options: RequestOptions & { headers: Record<string, string> } = { method, headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(options);
    if (this.as !== undefined) options.headers['Impersonate-User'] = this.as;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) options.headers['content-type'] = 'application/json';
    const { status, text } = await send(url, options, payload).catch((error: unknown) => {
      throw new SpoolError('unavailable', `cannot reach ${url.origin} (${(error as Error).message}); check the kubeconfig's cluster`);
    });
    const answer = parse(text) as { kind?: string; message?: string; reason?: string; error?: { code?: string; message?: string } };
    if (status >= 200 && status < 300) return { served: true, value: answer as T };
    // A 404 of the API server's own (no APIService for the group: "404 page not found"), not the
    // operator's (a Run it cannot find): an install from before the aggregated API.
    const ours = answer.error !== undefined || (answer.kind === 'Status' && answer.message !== 'the server could not find the requested resource');
    if (status === 404 && !ours) return { served: false };
    // kube-apiserver asks RBAC before it looks for the group, so a person without the new rules on
    // an older install is refused, not told it is missing: discovery (open to everyone) says which.
    if (status === 403 && !(await this.servesAggregatedApi())) return { served: false };
    if (status === 503 && answer.kind === 'Status') {
      throw new SpoolError('unavailable', `the operator's aggregated API (APIService v1alpha1.api.hyperspool.dev) is not available: ${answer.message ?? ''}; is the operator running? (kubectl get apiservice v1alpha1.api.hyperspool.dev)`);
    }
    const message = answer.error?.message ?? answer.message ?? `the API server answered ${status}`;
    throw errorOfAnswer(status, answer.error?.code, message);
  }

  /** Whether kube-apiserver serves api.hyperspool.dev (its discovery document answers). */
  async servesAggregatedApi(): Promise<boolean> {
    const cluster = this.kubeConfig.getCurrentCluster();
    const options: RequestOptions & { headers: Record<string, string> } = { method: 'GET', headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const { status } = await send(new URL(`${cluster?.server ?? ''}${aggregatedDiscoveryPath()}`), options).catch(() => ({ status: 0 }));
    return status === 200;
  }

  private async throughServiceProxy<T>(method: string, path: string, body?: unknown): Promise<T> {
    const cluster = this.kubeConfig.getCurrentCluster();
    const url = new URL(`${cluster?.server ?? ''}/api/v1/namespaces/${this.operatorNamespace}/services/${this.operatorService}:http/proxy/v1${path}`);
    // On a cluster the project is the namespace.
    if (!url.searchParams.has('project')) url.searchParams.set('project', this.namespace);
    if (isObject(body) && body.project === undefined) body = { ...body, project: this.namespace };
    const options: RequestOptions & { headers: Record<string, string> } = { method, headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(options);
    // The API server keeps Authorization for itself; the operator reads the user's token here.
    const userToken = options.headers.Authorization ?? options.headers.authorization;
    if (userToken) options.headers[USER_AUTHORIZATION] = userToken;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) options.headers['content-type'] = 'application/json';
    const { status, text } = await send(url, options, payload).catch((error: unknown) => {
      throw new SpoolError('unavailable', `cannot reach ${url.origin} (${(error as Error).message}); check the kubeconfig's cluster`);
    });
    const answer = parse(text) as { error?: { code?: string; message?: string }; message?: string };
    if (status >= 200 && status < 300) return answer as T;
    if (status === 503 && answer.message?.includes('no endpoints')) {
      throw new SpoolError('unavailable', `no operator answers at service ${this.operatorNamespace}/${this.operatorService}; is it installed and ready?`);
    }
    if (status === 401 && !userToken) {
      throw new SpoolError('unauthenticated', 'the operator needs your bearer token, and this kubeconfig user has none (a client certificate cannot be passed on); use a token or an exec plugin user');
    }
    const message = answer.error?.message ?? answer.message ?? `the operator answered ${status}`;
    throw errorOfAnswer(status, answer.error?.code, message);
  }
}

function send(url: URL, options: RequestOptions, payload?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const call = (url.protocol === 'https:' ? request : plainRequest)(url, options, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    call.on('error', reject);
    call.end(payload);
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text.trim() };
  }
}

/** A client-node error as one line: what was asked and what the API server said. */
export function kubeError(error: unknown, what: string): SpoolError {
  const failed = error as { code?: number; body?: unknown; message?: string };
  const body = typeof failed.body === 'string' ? parse(failed.body) : failed.body;
  const said = (body as { message?: string } | undefined)?.message ?? failed.message ?? String(error);
  const status = httpStatus(error);
  if (status === undefined) return new RetryableError('unavailable', `${what}: cannot reach the cluster (${said})`);
  if (status === 404) return new SpoolError('not_found', `${what} not found`);
  if (status === 403) return new SpoolError('forbidden', `${what}: ${said}`);
  return new SpoolError('internal', `${what}: ${said}`);
}
