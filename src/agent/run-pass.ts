import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { inputDocument } from '../engine/input.js';
import { Pass, type PassHost } from '../engine/pass.js';
import { scriptOutcome } from '../engine/settle.js';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import { NODE_CLI, NODE_CLIENT_DIR, scriptClient } from './script-client.js';
import { scriptEnv } from './script-env.js';
import { sdkEnvironment } from './sdks/sdk-environment.js';
import { AgentSocket } from './socket-server.js';
import { ScriptProcess } from './script-process.js';

export type PassOutcome = ReturnType<typeof scriptOutcome>;

export interface PassOptions {
  /** Where the script's stdout and stderr go: this process's own, or an open file. */
  output: 'inherit' | number;
  lenient?: boolean;
  /** Variables added to the script's environment. */
  env?: Record<string, string>;
  /** Aborting ends the script (its run was cancelled). */
  signal?: AbortSignal;
}


/**
 * Runs one pass: the run's recorded script, started from the top in the directory it was submitted
 * from, served by a fresh agent socket, until it exits or the agent ends it.
 */
export async function runPass(store: Store, run: RunRecord, host: PassHost, options: PassOptions): Promise<PassOutcome> {
  const client = scriptClient();
  const pass = await Pass.start(store, run, host, options.lenient);
  const cwd = run.cwd ?? process.cwd();
  const socketDir = mkdtempSync(join(tmpdir(), 'spool-'));
  const socketPath = join(socketDir, 'agent.sock');
  // The run's own copy of the script, beside the submit directory so node_modules resolve as usual.
  const scriptDir = join(cwd, '.spool', 'scripts', run.id.replace(/[^a-z0-9-]/gi, '_'));
  mkdirSync(scriptDir, { recursive: true });
  const scriptPath = join(scriptDir, basename(run.workflow));
  writeFileSync(scriptPath, run.script);
  const inputPath = join(socketDir, 'input.json');
  writeFileSync(inputPath, JSON.stringify(inputDocument(run)));

  let script: ScriptProcess | null = null;
  const agent = new AgentSocket(pass, () => script?.end());
  await agent.listen(socketPath);
  const origin = dirname(resolve(cwd, run.workflow));
  const base = { ...process.env, ...options.env, PYTHONPATH: [origin, process.env.PYTHONPATH].filter(Boolean).join(delimiter) };
  const env: NodeJS.ProcessEnv = {
    ...base,
    ...sdkEnvironment(base),
    // The native client first where there is one; bin/ after it, so `spool` there is this package's
    // own CLI either way, and the native client hands control verbs to it (SPOOL_CONTROL_CLI).
    PATH: [...new Set([client.dir, NODE_CLIENT_DIR])].join(delimiter) + delimiter + (process.env.PATH ?? ''),
    SPOOL_CONTROL_CLI: NODE_CLI,
    ...scriptEnv({ socket: socketPath, runId: run.id, pass: run.passes, inputFile: inputPath, output: options.output }),
  };
  try {
    script = new ScriptProcess([...run.interpreter.split(' '), scriptPath], {
      cwd,
      env,
      stdout: options.output,
      stderr: options.output,
    });
    const stop = (): void => script?.end();
    options.signal?.addEventListener('abort', stop);
    if (options.signal?.aborted) stop();
    const exit = await script.exited;
    options.signal?.removeEventListener('abort', stop);
    return scriptOutcome(pass, exit);
  } finally {
    await agent.close();
    rmSync(socketDir, { recursive: true, force: true });
    rmSync(scriptDir, { recursive: true, force: true });
  }
}
