/**
 * The requests a script sends its agent and the answers it gets (docs/protocol.md). Types only, so
 * the in-script client imports nothing at run time from here.
 */

export type StepRequest = { verb: 'step'; name: string; label?: string };
/** A function in the script's own process (an SDK's step_fn); its JSON value comes back in `done`. */
export type StepFnRequest = { verb: 'step_fn'; name: string };
/**
 * A command's result: its stdout as text, or (NUL, bytes that are not UTF-8) as `stdoutBase64`, and
 * its exit code. `stderrTail`, sent for a failed command, is the end of its stderr (at most
 * STDERR_TAIL_BYTES, as text): kept beside the result to say why it failed, never returned by a replay.
 */
export type DoneRequest =
  | { verb: 'done'; position: number; stdout: string; exitCode: number; stderrTail?: string }
  | { verb: 'done'; position: number; stdoutBase64: string; exitCode: number; stderrTail?: string }
  | { verb: 'done'; position: number; value: unknown };

export { STDERR_TAIL_BYTES } from '../common/stderr-tail.js';
export type SleepRequest = { verb: 'sleep'; ms: number };
export type WaitSignalRequest = { verb: 'wait.signal'; name: string; timeoutMs?: number };
export type WaitEventRequest = { verb: 'wait.event'; type: string; timeoutMs?: number };
export type LockRequest = { verb: 'lock'; group: string; command: boolean };
export type ActivitySpec = {
  name: string;
  argv: string[];
  requires: string[];
  attempts: number;
  backoffMs: number;
  retryOnExit: number[] | null;
};
export type ActivitySubmitRequest = { verb: 'activity.submit' } & ActivitySpec;
export type ActivityRunRequest = { verb: 'activity.run' } & ActivitySpec;
export type ActivityWaitRequest = { verb: 'activity.wait'; name: string } | { verb: 'activity.wait'; all: true };
export type StateRequest =
  | { verb: 'state.get'; key: string; entity?: string }
  | { verb: 'state.set'; key: string; value: string; entity?: string }
  | { verb: 'state.delete'; key: string; entity?: string }
  | { verb: 'state.list'; prefix?: string; entity?: string }
  | { verb: 'state.version'; key: string; entity?: string }
  | { verb: 'state.add'; key: string; value?: string; entity?: string }
  | { verb: 'state.incr'; key: string; by: number; op?: string; entity?: string }
  | { verb: 'state.cas'; key: string; expected: string | null; value: string; op?: string; entity?: string };
export type EmitRequest = { verb: 'event.emit'; type: string; subject?: string; payload?: unknown };
export type ChildRequest = {
  verb: 'spawn' | 'call';
  workflow: string;
  script: string;
  /** What runs the file; absent when its name picks nothing and it could not be read (`unreadable`): a Workflow's name, on a cluster. */
  interpreter?: string;
  input?: unknown;
  /** A fan_out body pinned with the run (its runner's fanOutBodies): the child runs with that body's pod settings. */
  body?: string;
  /**
   * Why the client could not read the file (`script` is empty then): a replayed call needs no file,
   * so the client asks anyway, and a new call is refused with this reason, taking no position.
   */
  unreadable?: string;
};
/** Waits until any of these child runs has ended (a pipeline's jobs); answers which, as JSON. */
export type WaitChildrenRequest = { verb: 'wait.children'; runIds: string[]; awaiting?: string };
/**
 * One graph node kind (docs/graphs.md) run as durable calls of this run, `spool call-node`: its
 * config as a graph node's, any value an $expr; answers the node's output as JSON.
 */
export type CallNodeRequest = { verb: 'call.node'; type: string; config: Record<string, unknown>; name?: string };
export type OutputRequest = { verb: 'output.set'; key: string; value: string };
export type AnnotateRequest = { verb: 'annotate'; text: string };
export type InfoRequest = { verb: 'agent.info' };
/**
 * Artifacts stream in parts (docs/artifacts.md): `put` takes the position and answers execute;
 * each `write` sends one part (base64, at most ARTIFACT_PART_BYTES); `commit` records it. A `get`
 * answers one part at a time. Nothing holds a whole artifact.
 */
/**
 * `size`: a file's, from stat, so a file over a limit is refused before a byte moves. `unreadable`:
 * why the client cannot read its file (it is gone, or not a file), sent instead of failing at
 * once: a replayed put needs no file (a new pod has none), and a new one is refused with this.
 */
export type ArtifactPutRequest = { verb: 'artifact.put'; name: string; contentType?: string; size?: number; unreadable?: string };
export type ArtifactWriteRequest = { verb: 'artifact.write'; position: number; data: string };
export type ArtifactCommitRequest = { verb: 'artifact.commit'; position: number; size: number; sha256: string };
export type ArtifactGetRequest = { verb: 'artifact.get'; name: string; part: number; run?: string };
export type ArtifactListRequest = { verb: 'artifact.list'; run?: string; json?: boolean };
export type ArtifactRequest =
  | ArtifactPutRequest
  | ArtifactWriteRequest
  | ArtifactCommitRequest
  | ArtifactGetRequest
  | ArtifactListRequest;
/**
 * The artifact that holds a run's checkout bundle (`--with DIR`, read by `spool checkout`): names
 * under `spool/` are Hyperspool's own, and a script's put of one is refused.
 */
export const CHECKOUT_ARTIFACT = 'spool/checkout.tar';
export const RESERVED_ARTIFACT_PREFIX = 'spool/';
/** The size of the parts clients send and `get` answers with (the last may be shorter). */
export const ARTIFACT_PART_BYTES = 512 * 1024;
/** What `artifact.get` answers in `value`: the artifact, and one part of its bytes. */
export type ArtifactPart = {
  name: string;
  size: number;
  sha256: string;
  contentType: string;
  parts: number;
  part: number;
  data: string;
};

export type Request =
  | StepRequest
  | StepFnRequest
  | DoneRequest
  | SleepRequest
  | WaitSignalRequest
  | WaitEventRequest
  | LockRequest
  | ActivitySubmitRequest
  | ActivityRunRequest
  | ActivityWaitRequest
  | StateRequest
  | EmitRequest
  | ChildRequest
  | WaitChildrenRequest
  | CallNodeRequest
  | OutputRequest
  | AnnotateRequest
  | InfoRequest
  | ArtifactRequest;

export type ErrorKind = 'usage' | 'determinism' | 'limit' | 'internal';

export type Answer =
  /**
   * The call is complete: print `stdout` (or the bytes of `stdoutBase64`: output that is not plain
   * text comes back byte for byte), print `stderr` as a line, exit with `exitCode`; a step_fn's
   * recorded JSON is `value`.
   */
  | { status: 'ok'; stdout?: string; stdoutBase64?: string; stderr?: string; exitCode?: number; replayed?: boolean; value?: unknown }
  /**
   * Run the command now (in the script's environment) and report it with a `done` request. With
   * tracing on, `traceparent` (W3C) names the step's span: the client puts it in the command's
   * environment as TRACEPARENT, so a command that traces joins the run's trace (docs/tracing.md).
   */
  | { status: 'execute'; position: number; idempotencyKey?: string; traceparent?: string }
  /** The call must wait: the agent is ending the script; the client should not go on. */
  | { status: 'suspended'; message: string }
  | { status: 'error'; kind: ErrorKind; message: string; exitCode: number };

/**
 * What `agent.info` reports. 2: step_fn, and an unknown verb is a usage error (`stdoutBase64`, for
 * output that is not plain text, came later without a new version: an agent that predates it
 * refuses it as a field it does not know, in one line). SDKs check it before
 * the calls that need a newer agent.
 */
export const PROTOCOL_VERSION = 2;

/** Exit codes of the CLI (DESIGN.md §3). */
export { EXIT } from '../common/exit-codes.js';
