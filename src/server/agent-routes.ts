import { basename } from 'node:path';
import { Router, type Request } from 'express';
import { inputDocument } from '../engine/input.js';
import { EXIT, type Answer, type Request as CallRequest } from '../engine/protocol.js';
import { activityReportRoutes } from './activity-report-routes.js';
import type { ResponseOf } from '../api/responses.js';
import type { ServerContext } from './context.js';
import { object } from './body.js';
import { HttpError, badRequest } from './http-error.js';
import type { RemotePass } from './remote-passes.js';

/**
 * The agent's side of the API: a pass whose script runs in a pod. The agent there serves the spool
 * socket and sends each durable call here, where the pass's journal cursor lives.
 */
export function agentRoutes(ctx: ServerContext): Router {
  const router = Router();
  const agents = ctx.agents;
  if (!agents) return router;
  router.use(activityReportRoutes(ctx));

  const bearer = (req: Request): string => {
    const token = /^Bearer (.+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!token) throw new HttpError(401, 'unauthenticated', 'agent requests need a bearer token: the pod’s projected service-account token');
    return token;
  };

  /** The run and pass the URL names, once the caller has proven it is that pass's agent. */
  const authorizedAgent = async (req: Request): Promise<{ runId: string; pass: number }> => {
    const runId = String(req.params.run);
    const pass = Number(req.params.pass);
    const token = bearer(req);
    const identity = await agents.authenticate(token);
    if (!identity) throw new HttpError(401, 'unauthenticated', 'the token was not accepted by the cluster (TokenReview)');
    if (identity.runId !== runId || identity.pass !== pass) {
      throw new HttpError(403, 'forbidden', `this token belongs to pass ${identity.pass} of run ${identity.runId}, not pass ${pass} of run ${runId}`);
    }
    return { runId, pass };
  };

  /** The pass under way here that the URL names, once the caller has proven it is that pass's agent. */
  const authorizedPass = async (req: Request): Promise<RemotePass> => {
    const { runId, pass } = await authorizedAgent(req);
    const remote = agents.passes.get(runId, pass);
    if (!remote) throw new HttpError(409, 'pass_ended', `pass ${pass} of run ${runId} is not under way here; its script must stop`);
    return remote;
  };

  // A warm pod's agent waits here for its pass: a long poll, answered when the operator assigns the
  // pod one, or with a null assignment after a while (the agent asks again). The pass's script
  // comes with it when the pass is under way here: the agent asks only once its runner waits for
  // the script (so the script container is up), and another round trip would be on the pass's
  // path. Else (another shard's replica hosts it, or it is over: an answer lost and asked for
  // late) the agent asks for the script as a cold pass's does, forwarded there or refused (409).
  router.get('/agent/assignment', async (req, res) => {
    const token = bearer(req);
    if (!agents.warmPods) throw new HttpError(403, 'forbidden', 'no warm pods here: passes run where the server runs');
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const answer = await agents.warmPods.wait(token, gone.signal);
    if (!answer) throw new HttpError(401, 'unauthenticated', 'the token is not bound to a warm pass pod of this operator (TokenReview)');
    const { assignment } = answer;
    if (!assignment) return void res.json({ assignment: null } satisfies ResponseOf<'GET /agent/assignment'>);
    const remote = agents.passes.get(assignment.runId, assignment.pass);
    res.json({ assignment: { run: assignment.runId, pass: assignment.pass, ...(remote ? { spec: specOf(remote) } : {}) } } satisfies ResponseOf<'GET /agent/assignment'>);
  });

  router.get('/agent/runs/:run/passes/:pass', async (req, res) => {
    res.json(specOf(await authorizedPass(req)) satisfies ResponseOf<'GET /agent/runs/:run/passes/:pass'>);
  });

  router.post('/agent/runs/:run/passes/:pass/calls', async (req, res) => {
    const { pass } = await authorizedPass(req);
    let answer: Answer;
    try {
      answer = await pass.handle(object(req.body) as CallRequest);
    } catch {
      answer = { status: 'error', kind: 'usage', message: 'malformed request: not one JSON object', exitCode: EXIT.usage };
    }
    res.json(answer satisfies ResponseOf<'POST /agent/runs/:run/passes/:pass/calls'>);
  });

  // Output is kept even when it arrives after the pass ended (the script's last words).
  router.post('/agent/runs/:run/passes/:pass/logs', async (req, res) => {
    const { runId, pass } = await authorizedAgent(req);
    // Output is bytes: a piece that is not plain text comes as `textBase64`.
    const { text, textBase64 } = object(req.body);
    if (typeof text !== 'string' && typeof textBase64 !== 'string') throw badRequest(`'text' or 'textBase64' (a string) is required`);
    const output = typeof textBase64 === 'string' ? Buffer.from(textBase64, 'base64') : String(text);
    if (output.length) await ctx.store.appendLog(runId, pass, output);
    res.json({ ok: true } satisfies ResponseOf<'POST /agent/runs/:run/passes/:pass/logs'>);
  });

  router.post('/agent/runs/:run/passes/:pass/exit', async (req, res) => {
    const remote = await authorizedPass(req);
    const body = object(req.body);
    const code = body.code === null || typeof body.code === 'number' ? body.code : undefined;
    const signal = body.signal === null || typeof body.signal === 'string' ? body.signal : undefined;
    if (code === undefined || signal === undefined) throw badRequest(`'code' (a number or null) and 'signal' (a string or null) are required`);
    remote.reportExit({ code, signal });
    res.json({ ok: true } satisfies ResponseOf<'POST /agent/runs/:run/passes/:pass/exit'>);
  });

  return router;
}

/** What the pass's pod runs. Asked for, the script is starting: --pass-start-timeout stops counting. */
function specOf(remote: RemotePass): ResponseOf<'GET /agent/runs/:run/passes/:pass'> {
  const { run } = remote;
  remote.markStarting();
  return { run: run.id, pass: run.passes, filename: basename(run.workflow), interpreter: run.interpreter, script: run.script, input: inputDocument(run) };
}
