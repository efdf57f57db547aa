import express, { type Express } from 'express';
import { authorizeRequests } from './access.js';
import { agentRoutes } from './agent-routes.js';
import { artifactRoutes } from './artifact-routes.js';
import { checkApiRequests } from './check-requests.js';
import { chatRoutes } from './chat/routes.js';
import { checkoutRoutes } from './checkout-routes.js';
import { compressJson } from './compress.js';
import type { ServerContext } from './context.js';
import { BODY_LIMIT, errorHandler, notFound, requireJson, utf8Body } from './http-error.js';
import { loopbackGuard } from './loopback-guard.js';
import { runPageRoutes } from './run-page-routes.js';
import { runsRoutes } from './runs-routes.js';
import { triggersRoutes } from './triggers-routes.js';
import { uiRoutes } from './ui-routes.js';

const READY_TIMEOUT_MS = 2_000;

/** Whether `query` settles successfully within `ms` (a database that hangs is as down as one that refuses). */
async function answersWithin(ms: number, query: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([query.then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The HTTP API (docs/api.md) over the engine; served by `spool dev` and by the operator alike. */
export function createApp(ctx: ServerContext): Express {
  const app = express();
  app.disable('x-powered-by');
  if (ctx.loopbackOnly) app.use(loopbackGuard);
  // Before requireJson: Slack's callbacks are form-encoded, and signed over their exact bytes.
  app.use('/integrations', chatRoutes(ctx));
  // Before requireJson: a checkout bundle is a tar archive, streamed as it comes.
  app.use('/v1/checkouts', checkoutRoutes(ctx));
  app.use(requireJson);
  app.use(express.json({ limit: BODY_LIMIT, verify: utf8Body }));
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  // Ready while the store answers: a server cut off from its database says so (and retries by itself).
  app.get('/readyz', async (_req, res) => {
    const up = await answersWithin(READY_TIMEOUT_MS, ctx.store.getRun('readiness-probe'));
    res.status(up ? 200 : 503).json(up ? { ready: true } : { ready: false, reason: 'the database does not answer' });
  });
  app.use('/v1', compressJson);
  app.use('/v1', authorizeRequests(ctx));
  app.use('/v1', checkApiRequests);
  app.use('/v1', agentRoutes(ctx));
  app.use('/v1', runsRoutes(ctx));
  app.use('/v1', artifactRoutes(ctx));
  app.use('/v1', triggersRoutes(ctx));
  app.use('/v1', runPageRoutes(ctx));
  app.use(uiRoutes());
  app.use((req) => {
    throw notFound(`${req.method} ${req.path}`);
  });
  app.use(errorHandler);
  return app;
}
