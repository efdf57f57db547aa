/**
 * The wire format of the spool socket (docs/protocol.md): one JSON object a line each way. A copy of
 * the engine's types, because the SDK ships alone and depends on nothing.
 */

export type Request = { verb: string } & Record<string, unknown>;

export type Answer =
  | { status: 'ok'; stdout?: string; stdoutBase64?: string; stderr?: string; exitCode?: number; replayed?: boolean; value?: unknown }
  | { status: 'execute'; position: number; idempotencyKey?: string; traceparent?: string }
  | { status: 'suspended'; message: string }
  | { status: 'error'; kind: 'usage' | 'determinism' | 'limit' | 'internal'; message: string; exitCode?: number };

export type OkAnswer = Extract<Answer, { status: 'ok' }>;
export type ExecuteAnswer = Extract<Answer, { status: 'execute' }>;

/** What `agent.info` reports: the protocol the agent speaks and the verbs it knows. */
export interface AgentInfo {
  protocol: number;
  verbs: string[];
}

/** Exit codes the agent puts in an `ok` answer that mean something other than failure. */
export const EXIT_TAKEN = 3;
export const EXIT_TIMED_OUT = 124;
