import type { Request, Response } from 'express';
import { ensureError } from '../common/errors.js';
import { shardOfRun } from '../store/run-shards.js';

/** Marks a call one replica passed on to another. */
const FORWARDED = 'x-hyperspool-forwarded';

/**
 * The shard whose leader hosts what an agent's call (`/runs/RUN/...` under /v1/agent) is about:
 * its run's. Any other call is shard 0's leader's.
 */
export function shardOfAgentCall(path: string, shards: number): number {
  const run = /^\/runs\/([^/]+)/.exec(path)?.[1];
  if (!run || shards === 1) return 0;
  try {
    return shardOfRun(decodeURIComponent(run), shards);
  } catch {
    // Not a run id (bad percent-encoding): wherever it goes, the API answers it as it answers bad input.
    return 0;
  }
}

/**
 * An agent's call that reached a replica which does not lead its run's shard: that shard's leader
 * hosts the pass, so the call goes on to it (`leader` is the Lease's holder, `NAME@URL`) and its answer comes back as it is.
 */
export async function forwardToLeader(leader: string | undefined, req: Request, res: Response): Promise<void> {
  const base = leader?.slice(leader.indexOf('@') + 1);
  if (!leader || !base) {
    res.status(503).json({ error: { code: 'no_leader', message: 'no operator replica leads right now; try again shortly' } });
    return;
  }
  // Forwarded once at most: two replicas that each see the other as the leader (a shard changing
  // hands) would otherwise pass a call back and forth until it timed out.
  if (req.get(FORWARDED)) {
    res.status(503).json({ error: { code: 'no_leader', message: `the replica this call was forwarded to does not lead it either (it sees ${base} as the leader); try again shortly` } });
    return;
  }
  try {
    const body = req.method === 'GET' ? undefined : await readBody(req);
    const answer = await fetch(`${base}${req.originalUrl}`, {
      method: req.method,
      // A connection per request, as the agents do (server-client.ts): a reused idle one can be cut off mid-call.
      headers: { [FORWARDED]: '1', connection: 'close', authorization: req.get('authorization') ?? '', 'content-type': req.get('content-type') ?? 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    res.status(answer.status).type('application/json').send(await answer.text());
  } catch (error) {
    res.status(503).json({ error: { code: 'no_leader', message: `the leader at ${base} cannot be reached: ${ensureError(error).message}` } });
  }
}

function readBody(req: Request): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
