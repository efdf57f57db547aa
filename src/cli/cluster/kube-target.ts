import { request } from 'node:https';
import { request as plainRequest, type RequestOptions } from 'node:http';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { SpoolError, UsageError } from '../../common/errors.js';
import { USER_AUTHORIZATION } from '../../server/access.js';
import { GROUP, RUN, VERSION, type Run } from '../../operator/api/generated.js';
import type { Target } from '../control/target.js';
import { httpStatus } from '../../operator/kube/request-options.js';

export interface ClusterOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** `NAMESPACE/SERVICE` of the operator's API (default hyperspool-system/hyperspool-operator). */
  operator?: string;
}

/**
 * A cluster as the CLI sees it, through the kubeconfig like kubectl: Runs and Workflows through the
 * API server as the user, and the operator API through the API server's service proxy, with the
 * user's own token in a header the proxy passes on, so the operator can authorize the user with a
 * SubjectAccessReview.
 */
export class ClusterTarget implements Target {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly custom: CustomObjectsApi;
  private readonly operatorNamespace: string;
  private readonly operatorService: string;

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
  }

  describe(): string {
    return `cluster ${this.kubeConfig.getCurrentCluster()?.server ?? ''}`;
  }

  /** A Run resource name is what people type on a cluster; the API takes the run's id. */
  async runId(arg: string): Promise<string> {
    if (arg.includes(':')) return arg;
    const run = await this.getRun(arg);
    if (!run.status?.runId) throw new SpoolError('not_found', `Run ${arg} in namespace ${this.namespace} has not been admitted yet (is the operator running?)`);
    return run.status.runId;
  }

  async getRun(name: string): Promise<Run> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.namespace, plural: RUN.plural, name })) as Run;
    } catch (error) {
      throw kubeError(error, `Run ${name} in namespace ${this.namespace}`);
    }
  }

  async api<T>(method: string, path: string, body?: unknown): Promise<T> {
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
    throw new SpoolError(status === 404 ? 'not_found' : status === 400 ? 'usage' : (answer.error?.code ?? 'server'), message);
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
  if (status === 404) return new SpoolError('not_found', `${what} not found`);
  if (status === 403) return new SpoolError('forbidden', `${what}: ${said}`);
  if (status === undefined) return new SpoolError('unavailable', `${what}: cannot reach the cluster (${said})`);
  return new SpoolError('server', `${what}: ${said}`);
}
