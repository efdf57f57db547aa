import { exitCodeOf, UsageError } from '../../common/errors.js';
import { oneLine } from '../../common/one-line.js';
import { servePodAgent } from './pod-agent.js';

/**
 * `spool agent` as a pass's Job runs it (`agent --socket S --control C`): the shape src/cli/main.ts
 * starts straight here, without the control CLI. The agent's start is on every cold pass's path
 * (the script container waits for its socket), and commander with every control command's modules
 * was a third of it (docs/benchmarks.md, "A cold pass on the node"). Anything else, such as
 * `spool agent --help` or a mistake, goes to the full CLI, which answers it.
 */
export function podAgentOf(args: readonly string[]): { run(): Promise<number> } | null {
  const [verb, socketFlag, socket, controlFlag, control, ...rest] = args;
  if (verb !== 'agent' || socketFlag !== '--socket' || controlFlag !== '--control' || !socket || !control || rest.length) return null;
  return { run: () => runPodAgent({ socket, control }) };
}

/** Serves the pass's sockets until the kubelet stops the pod; what to exit with. */
export async function runPodAgent(sockets: { socket: string; control: string }): Promise<number> {
  // Listened for before the sockets appear: the kubelet may stop the pod at any moment.
  const stopped = new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  try {
    const agent = await servePodAgent({
      ...sockets,
      server: required('SPOOL_SERVER'),
      runId: required('SPOOL_RUN_ID'),
      pass: Number(required('SPOOL_PASS')),
      tokenFile: required('SPOOL_TOKEN_FILE'),
    });
    await stopped;
    await agent.close();
    return 0;
  } catch (error) {
    process.stderr.write(`spool: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return exitCodeOf(error);
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new UsageError(`${name} is required`);
  return value;
}
