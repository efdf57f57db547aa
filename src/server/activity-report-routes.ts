import { Router } from 'express';
import { bytesField } from '../common/output-bytes.js';
import { maxValueBytes } from '../engine/limits.js';
import { activityId } from '../engine/verbs/activities.js';
import { settleActivityAttempt } from '../activities/activity-attempts.js';
import type { ResponseOf } from '../api/responses.js';
import type { ServerContext } from './context.js';
import { object } from './body.js';
import { HttpError, badRequest } from './http-error.js';

/**
 * An activity attempt's pod reports its command's stdout and exit code here, once, and for a
 * failed attempt the end of its stderr (checked against API_ROUTES before the route sees it). The result is
 * recorded only while that attempt is the one running (the store's conditional update), so a
 * second report, a late one from a superseded attempt, or the same report reaching two replicas
 * lands once; the pod is told 409 and nothing changes.
 */
export function activityReportRoutes(ctx: ServerContext): Router {
  const router = Router();
  const agents = ctx.agents?.activities;
  if (!agents) return router;

  router.post('/agent/runs/:run/activities/:name/attempts/:attempt', async (req, res) => {
    const runId = String(req.params.run);
    const name = String(req.params.name);
    const attempt = Number(req.params.attempt);
    const token = /^Bearer (.+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!token)
      throw new HttpError(
        401,
        'unauthenticated',
        'activity reports need a bearer token: the pod’s projected service-account token',
      );
    const identity = await agents.authenticate(token);
    if (!identity)
      throw new HttpError(401, 'unauthenticated', 'the token was not accepted by the cluster (TokenReview)');
    if (identity.runId !== runId || identity.name !== name || identity.attempt !== attempt) {
      throw new HttpError(
        403,
        'forbidden',
        `this token belongs to attempt ${identity.attempt} of activity ${identity.name} of run ${identity.runId}`,
      );
    }
    const body = object(req.body);
    const { stdout, stdoutBase64, exitCode, stderrTail } = body;
    if (
      typeof stdout === typeof stdoutBase64 ||
      (stdout !== undefined && typeof stdout !== 'string') ||
      (stdoutBase64 !== undefined && typeof stdoutBase64 !== 'string') ||
      typeof exitCode !== 'number' ||
      !Number.isInteger(exitCode) ||
      exitCode < 0 ||
      exitCode > 255
    ) {
      throw badRequest(`one of 'stdout' (a string) or 'stdoutBase64' (its bytes as base64), and 'exitCode' (a whole number 0-255), are required`);
    }
    const bytes = typeof stdoutBase64 === 'string' ? Buffer.from(stdoutBase64, 'base64') : Buffer.from(String(stdout));
    if (bytes.length > maxValueBytes())
      throw badRequest(`'stdout' is over the ${maxValueBytes()}-byte limit for a recorded result`);
    // Kept as a step's output is: a NUL sent as text (a reporter from before stdoutBase64) goes in as bytes.
    const output = bytesField('stdout', bytes);
    const activity = await ctx.store.getActivity(activityId(runId, name));
    const current = activity && activity.attempt === attempt && activity.status === 'running';
    const landed =
      current &&
      (await settleActivityAttempt(
        ctx.store,
        activity,
        { kind: 'result', result: { ...output, exitCode, attempts: attempt, ...failedTail(exitCode, stderrTail) } },
        ctx.now(),
      ));
    if (!landed)
      throw new HttpError(
        409,
        'attempt_over',
        `attempt ${attempt} of activity ${name} is not under way: it was superseded, or its result is recorded already`,
      );
    agents.reported(identity);
    ctx.poke();
    res.json({ recorded: true } satisfies ResponseOf<'POST /agent/runs/:run/activities/:name/attempts/:attempt'>);
  });

  return router;
}

/** A tail is kept only beside a failure, as a step's is (commands.ts). */
function failedTail(exitCode: number, tail: unknown): { stderrTail?: string } {
  return exitCode !== 0 && typeof tail === 'string' && tail ? { stderrTail: tail } : {};
}
