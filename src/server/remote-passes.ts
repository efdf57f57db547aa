import { Pass, type PassHost } from '../engine/pass.js';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';

/** Who an agent is: the one pass of one run its credentials were issued for. */
export interface AgentIdentity {
  runId: string;
  pass: number;
}

/** How the script of a remote pass ended, as its runner reported it. */
export interface ScriptExit {
  code: number | null;
  signal: string | null;
}

/** A pass whose script runs elsewhere (a pod) and whose durable calls arrive over HTTP. */
export interface RemotePass {
  pass: Pass;
  run: RunRecord;
  /** Settles when the script's runner reports that the script ended. */
  exited: Promise<ScriptExit>;
  reportExit(exit: ScriptExit): void;
  /** Settles when the pod's agent first asks for the script: the script is starting. */
  starting: Promise<void>;
  markStarting(): void;
}

/**
 * The passes under way on remote agents, by run and pass number. They live in this process only:
 * a pass whose host goes away is lost, and its run is dispatched again and replays.
 */
export class RemotePasses {
  private readonly open = new Map<string, RemotePass>();

  async start(store: Store, run: RunRecord, host: PassHost): Promise<RemotePass> {
    const pass = await Pass.start(store, run, host);
    let reportExit!: (exit: ScriptExit) => void;
    const exited = new Promise<ScriptExit>((resolve) => (reportExit = resolve));
    let markStarting!: () => void;
    const starting = new Promise<void>((resolve) => (markStarting = resolve));
    const remote: RemotePass = { pass, run, exited, reportExit, starting, markStarting };
    this.open.set(key(run.id, run.passes), remote);
    return remote;
  }

  get(runId: string, pass: number): RemotePass | undefined {
    return this.open.get(key(runId, pass));
  }

  end(runId: string, pass: number): void {
    this.open.get(key(runId, pass))?.pass.end();
    this.open.delete(key(runId, pass));
  }

  get size(): number {
    return this.open.size;
  }
}

function key(runId: string, pass: number): string {
  return `${runId}#${pass}`;
}
