import type { Request, Response } from 'express';
import { ensureError } from '../common/errors.js';

/**
 * An agent's call that reached a replica which does not lead: the leader hosts the pass, so the call
 * goes on to it (`leader` is the Lease's holder, `NAME@URL`) and its answer comes back as it is.
 */
export async function forwardToLeader(leader: string | undefined, req: Request, res: Response): Promise<void> {
  const base = leader?.slice(leader.indexOf('@') + 1);
  if (!leader || !base) {
    res.status(503).json({ error: { code: 'no_leader', message: 'no operator replica leads right now; try again shortly' } });
    return;
  }
  try {
    const body = req.method === 'GET' ? undefined : await readBody(req);
    const answer = await fetch(`${base}${req.originalUrl}`, {
      method: req.method,
      // A connection per request, as the agents do (server-client.ts): a reused idle one can be cut off mid-call.
      headers: { connection: 'close', authorization: req.get('authorization') ?? '', 'content-type': req.get('content-type') ?? 'application/json' },
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
