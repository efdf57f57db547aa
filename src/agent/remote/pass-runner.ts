import { bytesField } from '../../common/output-bytes.js';
import { connect, type Socket } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tailFile } from '../../common/file-tail.js';
import { onLines } from '../framing.js';
import { scriptEnv } from '../script-env.js';
import { ScriptProcess } from '../script-process.js';
import type { PassSpec } from './server-client.js';

export interface PassRunnerOptions {
  /** The agent's control socket. */
  control: string;
  /** The spool socket the script is given. */
  socket: string;
  /** Where the script and its input are written (an emptyDir: the root filesystem may be read-only). */
  workdir: string;
}

/**
 * How long `spool pass` waits for the agent's control socket: the kubelet starts both containers
 * with no order between them (no probe holds this one back), and a busy node may be slow.
 */
const AGENT_WAIT_MS = 60_000;

/**
 * The script container's entry point on a cluster: asks the agent for the pass's script, runs it
 * as a process group of its own, ends it when the agent says the run suspended, and reports how it
 * ended. Exits 0 when the agent stopped the script (the pass ended as planned), else the script's code.
 */
export async function runPodPass(options: PassRunnerOptions): Promise<number> {
  const control = await connectWithin(options.control, AGENT_WAIT_MS);
  const answers: ((message: Record<string, unknown>) => void)[] = [];
  let stopRequested = false;
  let script: ScriptProcess | null = null;
  onLines(control, (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (message.stop === true) {
      stopRequested = true;
      script?.end();
    } else answers.shift()?.(message);
  });
  const ask = (message: unknown): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      answers.push(resolve);
      control.write(`${JSON.stringify(message)}\n`);
    });

  const reply = await ask({ verb: 'spec' });
  if (typeof reply.error === 'string') throw new Error(reply.error);
  const spec = reply.spec as PassSpec;
  mkdirSync(options.workdir, { recursive: true });
  const scriptPath = join(options.workdir, spec.filename);
  const inputPath = join(options.workdir, 'input.json');
  writeFileSync(scriptPath, spec.script);
  writeFileSync(inputPath, JSON.stringify(spec.input));

  // Output goes to the container's log (kubectl logs) and, through the agent, to the run's log
  // in the store (spool logs), which outlives the pod.
  const output = tailFile(join(options.workdir, 'output.log'), (bytes) => {
    process.stdout.write(bytes);
    control.write(`${JSON.stringify({ verb: 'log', ...bytesField('text', bytes) })}\n`);
  });
  script = new ScriptProcess([...spec.interpreter.split(' '), scriptPath], {
    cwd: options.workdir,
    env: {
      ...process.env,
      ...scriptEnv({ socket: options.socket, runId: spec.run, pass: spec.pass, inputFile: inputPath, output: output.fd }),
    },
    stdout: output.fd,
    stderr: output.fd,
  });
  if (stopRequested) script.end();
  // SIGTERM is the pod going away (deleted, evicted, its node drained): the script is ended and its
  // end is not reported, so the operator counts the pass as lost and the run replays elsewhere,
  // rather than failing with "script killed by SIGTERM".
  let evicted = false;
  const onTerm = (): void => {
    evicted = true;
    script?.end();
  };
  process.once('SIGTERM', onTerm);
  const exit = await script.exited;
  process.removeListener('SIGTERM', onTerm);
  await output.close();
  // A script its launcher took with it (launcher.ts) is not reported either: the run replays.
  if (evicted || exit.lost) {
    control.end();
    return 143;
  }
  const acknowledged = await ask({ verb: 'exit', code: exit.code, signal: exit.signal });
  control.end();
  if (typeof acknowledged.error === 'string') process.stderr.write(`spool: could not report the script's end: ${acknowledged.error}\n`);
  return stopRequested ? 0 : (exit.code ?? 1);
}

async function connectWithin(path: string, ms: number): Promise<Socket> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = connect(path);
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      });
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the agent's socket ${path} did not appear: ${String(error)}`);
      // A local socket: trying often is cheap, and the script starts that much sooner.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
