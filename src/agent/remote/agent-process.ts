import { exitCodeOf, UsageError } from '../../common/errors.js';
import { oneLine } from '../../common/one-line.js';
import { servePodAgent } from './pod-agent.js';
import { awaitAssignment, type Assignment } from './warm-assignment.js';

/**
 * `spool agent` as a pass's Job runs it (`agent --socket S --control C`, and `--warm` in a warm
 * pod): the shape src/cli/main.ts starts straight here, without the control CLI. The agent's start
 * is on every cold pass's path (the script container waits for its socket), and commander with
 * every control command's modules was a third of it (docs/benchmarks.md, "A cold pass on the
 * node"). Anything else, such as `spool agent --help` or a mistake, goes to the full CLI, which
 * answers it.
 */
export function podAgentOf(args: readonly string[]): { run(): Promise<number> } | null {
  const [verb, socketFlag, socket, controlFlag, control, ...rest] = args;
  if (verb !== 'agent' || socketFlag !== '--socket' || controlFlag !== '--control' || !socket || !control) return null;
  if (rest.length > 1 || (rest.length === 1 && rest[0] !== '--warm')) return null;
  return { run: () => runPodAgent({ socket, control, warm: rest[0] === '--warm' }) };
}

/**
 * Serves the pass's sockets until the kubelet stops the pod; what to exit with. A cold pass's Job
 * names its run and pass in the env; a warm pod's agent waits for the operator to assign it one.
 */
export async function runPodAgent(options: { socket: string; control: string; warm?: boolean }): Promise<number> {
  // Listened for before the sockets appear: the kubelet may stop the pod at any moment.
  const stopping = new AbortController();
  const stopped = new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  }).then(() => stopping.abort());
  let agent: { close(): Promise<void> } | null = null;
  try {
    const server = required('SPOOL_SERVER');
    const tokenFile = required('SPOOL_TOKEN_FILE');
    const pass = options.warm ? null : { runId: required('SPOOL_RUN_ID'), pass: Number(required('SPOOL_PASS')) };
    // A warm pod asks for its pass once its runner asks for the script (servePodAgent asks once):
    // then both its containers are up, and a pass it takes starts at once.
    let refused: (error: unknown) => void = () => undefined;
    const refusal = new Promise<never>((_, reject) => (refused = reject));
    const assignment = (): Promise<Assignment> => {
      if (pass) return Promise.resolve(pass);
      const asked = awaitAssignment({ server, tokenFile, signal: stopping.signal });
      asked.catch(refused);
      return asked;
    };
    agent = await servePodAgent({ socket: options.socket, control: options.control, server, tokenFile, assignment });
    // A warm pod the operator refuses ends here (its runner, told so, ends too), and its Job
    // with it: the pool replaces it.
    await Promise.race([stopped, refusal]);
    return 0;
  } catch (error) {
    if (stopping.signal.aborted) return 0;
    process.stderr.write(`spool: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return exitCodeOf(error);
  } finally {
    await agent?.close();
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new UsageError(`${name} is required`);
  return value;
}
