import type { PassHost } from '../engine/pass-state.js';
import type { Answer, Request } from '../engine/protocol.js';
import type { RunRecord } from '../store/types.js';

/**
 * What a node needs of the run it is a call of: its durable calls, answered by the run's pass in
 * this process (the graph's runner, or a script's `spool call-node`), the run (its id, workflow,
 * cwd and pinned bodies) and the host (its limits).
 */
export interface NodeHost {
  handle(request: Request): Promise<Answer>;
  run: RunRecord;
  host: PassHost;
}

/** Thrown when a durable call suspended the pass: the run carries on at a later pass, from the journal. */
export class Suspended extends Error {}

export type OkAnswer = Extract<Answer, { status: 'ok' }>;

/** A durable call that must answer ok (or suspend the pass): anything else ends the pass failed. */
export async function callOk(node: NodeHost, request: Request): Promise<OkAnswer> {
  const answer = await node.handle(request);
  if (answer.status !== 'ok') unexpected(answer, request.verb);
  return answer;
}

/** An answer a node cannot go on from: a suspension (the pass ends, to carry on later) or an error. */
export function unexpected(answer: Answer, verb: string): never {
  if (answer.status === 'suspended') throw new Suspended();
  throw new Error(answer.status === 'error' ? answer.message : `unexpected answer ${answer.status} to ${verb}`);
}

/** How a node ended: its output is what `nodes.<id>.output` reads. */
export interface NodeResult {
  status: 'succeeded' | 'failed';
  output: unknown;
  error: string | null;
}
