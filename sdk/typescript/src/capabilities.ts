import { agent, type Connection } from './connection.js';
import { ScriptError } from './errors.js';
import { ok } from './answers.js';
import type { AgentInfo } from './protocol.js';

/** An agent that predates `agent.info` answers it with an unknown-verb error: it speaks protocol 0. */
const ANCIENT: AgentInfo = { protocol: 0, verbs: [] };

async function ask(connection: Connection): Promise<AgentInfo> {
  const answer = await connection.request({ verb: 'agent.info' });
  if (answer.status === 'error') return ANCIENT;
  try {
    const info = JSON.parse((await ok(answer)).stdout ?? '') as Partial<AgentInfo>;
    return {
      protocol: typeof info.protocol === 'number' ? info.protocol : 0,
      verbs: Array.isArray(info.verbs) ? info.verbs.filter((verb) => typeof verb === 'string') : [],
    };
  } catch (error) {
    if (error instanceof SyntaxError) return ANCIENT;
    throw error;
  }
}

/**
 * Fails at the call site, before the request is sent, when this process's agent is too old for the
 * call: sent anyway, an old agent would take a bounded wait for an unbounded one, or fail later with
 * an error that does not say why. Asked once per connection.
 */
export async function requireAgent(call: string, verb: string, protocol = 1): Promise<void> {
  const connection = await agent();
  connection.info ??= ask(connection);
  const info = await connection.info;
  if (info.protocol >= protocol && info.verbs.includes(verb)) return;
  const lacks = info.verbs.includes(verb) ? '' : ` and does not know '${verb}'`;
  throw new ScriptError(
    'usage',
    `${call} needs an agent that speaks protocol ${protocol} and knows '${verb}'; this one speaks protocol ${info.protocol}${lacks}: run the script with a newer spool`,
  );
}
