import type { Command } from 'commander';
import { parseDuration } from '../../common/duration.js';
import { UsageError } from '../../common/errors.js';
import { chatOption } from '../chat-option.js';
import { scriptOtelVariables } from '../../tracing/tracing.js';

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} is required`);
  return value;
}

function positive(value: string | undefined, what: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`${what} takes a whole number of seconds, not '${value ?? ''}'`);
  return number;
}

function count(value: string | undefined, what: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`${what} takes a whole number of at least 1, not '${value ?? ''}'`);
  return number;
}

function whole(value: string | undefined, what: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new UsageError(`${what} takes a whole number, not '${value ?? ''}'`);
  return number;
}

/** `7d` as seconds, or null for `never` (keep). */
function keepFor(value: string | undefined, what: string): number | null {
  if (value === 'never') return null;
  try {
    return Math.floor(parseDuration(value ?? '') / 1000);
  } catch {
    throw new UsageError(`${what} takes a duration such as 1h, 7d or 90d, or never, not '${value ?? ''}'`);
  }
}

function waitForStop(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

/** The commands a cluster runs: the operator, and the two halves of a pass's pod. */
export function registerClusterInternals(program: Command, setExit: (code: number) => void): void {
  program
    .command('operator')
    .description('run the Kubernetes operator (in its Deployment; uses the in-cluster config or KUBECONFIG)')
    .option('--database-url <url>', 'the PostgreSQL server of the journal', process.env.DATABASE_URL)
    .option('--port <port>', 'API port', '7456')
    .option('--metrics-port <port>', 'probes and metrics port', '9464')
    .option('--aggregated-port <port>', 'the aggregated API (api.hyperspool.dev) HTTPS port, which kube-apiserver calls', '7443')
    .option('--namespace <ns>', 'namespace of the leader Lease', process.env.POD_NAMESPACE ?? 'hyperspool-system')
    .option('--runner-image <image>', 'image of pass pods', process.env.SPOOL_RUNNER_IMAGE ?? 'hyperspool/runner:dev')
    .option('--agent-server <url>', 'how pass pods reach the API', process.env.SPOOL_AGENT_SERVER ?? 'http://hyperspool-operator.hyperspool-system.svc:7456')
    .option('--lease-duration <seconds>', 'how long a leader that stopped renewing keeps the others waiting', '15')
    .option('--pass-start-timeout <seconds>', "how long a pass's pod may take to start its script before the pass is dispatched again", '600')
    .option('--run-ttl <duration>', 'delete a Run resource this long after its run finished, unless it or its Workflow sets ttlSecondsAfterFinished (never: keep them)', '7d')
    .option('--archive-retention <duration>', "delete a finished run's journal, logs and outputs from PostgreSQL this long after it finished (never: keep them)", '90d')
    .option('--max-running-passes <n>', "how many passes run at once, in all namespaces (a namespace's hyperspool.dev/max-running-passes annotation caps its own)", '16')
    .option('--shards <n>', 'split the runs into this many shards, each led by one replica at a time (the same on every replica; 1: one leader does everything)', '1')
    .option('--max-warm-pods <n>', "how many idle warm pass pods (Workflows' spec.warmPods) there may be, in all namespaces (0: none)", '8')
    .option('--warm-pod-ttl <duration>', 'how long a warm pass pod may wait idle before a fresh one replaces it (never: as long as it lasts)', '15m')
    .option('--chat <file>', 'approval gates in Slack and Mattermost: a JSON file of tokens and people, e.g. a mounted Secret (docs/ui.md); default $SPOOL_CHAT')
    .option('--artifacts <where>', "where artifacts' bytes go: postgresql (the journal's database) or s3://BUCKET[/PREFIX] (keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, e.g. a Secret as env: docs/artifacts.md)", process.env.SPOOL_ARTIFACTS)
    .option('--s3-endpoint <url>', 'an S3-compatible server (MinIO, versitygw, Ceph...) instead of AWS S3', process.env.SPOOL_S3_ENDPOINT)
    .option('--s3-region <region>', "the bucket's region (default $AWS_REGION or us-east-1)")
    .action(async (options: Record<string, string | undefined>) => {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const chat = await chatOption(options.chat ?? process.env.SPOOL_CHAT);
      const { startOperator } = await import('../../operator/operator.js');
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
      const port = Number(options.port);
      const podIp = process.env.POD_IP;
      const operator = await startOperator({
        kubeConfig,
        databaseUrl: required(options.databaseUrl, '--database-url (or DATABASE_URL)'),
        namespace: options.namespace ?? 'hyperspool-system',
        name: process.env.POD_NAME ?? process.env.HOSTNAME ?? 'hyperspool-operator',
        port,
        metricsPort: Number(options.metricsPort),
        aggregatedPort: Number(options.aggregatedPort),
        leaseDurationSeconds: positive(options.leaseDuration, '--lease-duration'),
        runTtlSeconds: keepFor(options.runTtl, '--run-ttl'),
        archiveRetentionSeconds: keepFor(options.archiveRetention, '--archive-retention'),
        ...(podIp ? { advertiseUrl: `http://${podIp}:${port}` } : {}),
        ...(chat ? { chat } : {}),
        maxRunningPasses: count(options.maxRunningPasses, '--max-running-passes'),
        shards: count(options.shards, '--shards'),
        warmPods: { max: whole(options.maxWarmPods, '--max-warm-pods'), idleSeconds: keepFor(options.warmPodTtl, '--warm-pod-ttl') },
        artifacts: { artifacts: options.artifacts, s3Endpoint: options.s3Endpoint, s3Region: options.s3Region },
        jobs: {
          runnerImage: options.runnerImage ?? '',
          serverUrl: options.agentServer ?? '',
          ttlSecondsAfterFinished: 600,
          startTimeoutSeconds: positive(options.passStartTimeout, '--pass-start-timeout'),
          scriptEnv: scriptOtelVariables(),
        },
      });
      // The operator's first log line says where it listens (the addresses it really bound).
      await waitForStop();
      await operator.close();
    });

  program
    .command('agent')
    .description("serve a pass's spool socket in its pod (the native sidecar), sending calls to the operator")
    .requiredOption('--socket <path>', 'the spool socket')
    .requiredOption('--control <path>', "the pass runner's socket")
    .option('--warm', 'a warm pod: wait for the operator to assign a pass, rather than read one from SPOOL_RUN_ID and SPOOL_PASS')
    // Reached for what the Job does not run (bin/spool starts the Job's own call straight in runPodAgent).
    .action(async (options: { socket: string; control: string; warm?: boolean }) => {
      const { runPodAgent } = await import('../../agent/remote/agent-process.js');
      setExit(await runPodAgent(options));
    });

  program
    .command('pass')
    .description("run a pass's script in its pod, as the agent beside it says")
    .requiredOption('--socket <path>', 'the spool socket')
    .requiredOption('--control <path>', "the agent's control socket")
    .option('--workdir <dir>', 'where the script is written', '/spool/work')
    .action(async (options: { socket: string; control: string; workdir: string }) => {
      const { runPodPass } = await import('../../agent/remote/pass-runner.js');
      setExit(await runPodPass(options));
    });
}
