import { readFileSync } from 'node:fs';
import type { PassSpec } from './server-client.js';

/** The one pass a warm pod serves, once the operator has assigned it, and (a warm pod's) its script. */
export interface Assignment {
  runId: string;
  pass: number;
  spec?: PassSpec;
}

export interface AssignmentOptions {
  server: string;
  /** The pod's projected service-account token: the operator knows the pod by it. */
  tokenFile: string;
  /** The agent is stopping (its pod deleted while it waited). */
  signal: AbortSignal;
}

/** Thrown when the operator says this pod will never be assigned a pass (it is not a warm pod of its own). */
export class NotWarm extends Error {}

/** How long one ask may go unanswered: the operator answers within ~20 s, assigned or not. */
const ASK_TIMEOUT_MS = 60_000;
/** How soon to ask again after an operator that could not be reached or had no leader (503). */
const RETRY_MS = 1_000;

/**
 * A warm pod's agent waits here, without a run, until the operator assigns it one pass of one run
 * (`GET /v1/agent/assignment`, a long poll: docs/api.md), and is handed that pass's script with it.
 * It asks again when an answer says "not yet", and through a leader's handover; it gives up only
 * when the operator refuses the pod.
 */
export async function awaitAssignment(options: AssignmentOptions): Promise<Assignment> {
  const url = `${options.server.replace(/\/$/, '')}/v1/agent/assignment`;
  for (;;) {
    options.signal.throwIfAborted();
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { connection: 'close', authorization: `Bearer ${readFileSync(options.tokenFile, 'utf8').trim()}` },
        signal: AbortSignal.any([options.signal, AbortSignal.timeout(ASK_TIMEOUT_MS)]),
      });
    } catch {
      options.signal.throwIfAborted();
      await pause(RETRY_MS, options.signal);
      continue;
    }
    const body = (await response.json().catch(() => ({}))) as { assignment?: { run: string; pass: number; spec: PassSpec } | null; error?: { message?: string } };
    if (response.ok && body.assignment) return { runId: body.assignment.run, pass: body.assignment.pass, spec: body.assignment.spec };
    if (response.ok) continue;
    if (response.status === 401 || response.status === 403) throw new NotWarm(body.error?.message ?? `the operator answered ${response.status}`);
    await pause(RETRY_MS, options.signal);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
