import { Router } from 'express';
import type { RunRecord } from '../store/types.js';
import type { ResponseOf } from '../api/responses.js';
import { answerGate, listGates } from './approvals.js';
import { object, text } from './body.js';
import type { ServerContext } from './context.js';
import { badRequest, notFound, unprocessable } from './http-error.js';
import { callerWithGroups } from './caller.js';
import { runShape } from './run-shape.js';
import { listedProject } from './listed-project.js';
import { loadRun, runViewIn } from './runs-routes.js';
import { timeline } from './timeline.js';
import { workflowStats } from './workflow-stats.js';
import { waitingApprovals } from './waiting-approvals.js';
import { startForm } from '../workflow-file/start-form.js';

/**
 * What the run page reads besides the run itself (docs/api.md): its timeline, its shape, its approval gates
 * (and answering them), and the workflows runs were started from, with each one's runs over time and
 * what starts another run of it.
 */
export function runPageRoutes(ctx: ServerContext): Router {
  const router = Router();
  const { store } = ctx;

  const load = (id: string): Promise<RunRecord> => loadRun(store, id);

  router.get('/runs/:id/timeline', async (req, res) => {
    const run = await load(req.params.id);
    const [entries, times] = await Promise.all([store.readJournal(run.id), store.readJournalTimes(run.id)]);
    res.json({ run: await runViewIn(ctx, run), timeline: timeline(entries, times) } satisfies ResponseOf<'GET /runs/:id/timeline'>);
  });

  router.get('/runs/:id/approvals', async (req, res) => {
    const run = await load(req.params.id);
    res.json({ approvals: await listGates(ctx, run) } satisfies ResponseOf<'GET /runs/:id/approvals'>);
  });

  // The Approvals page: the gates waiting that the caller may answer, and who the server takes them for.
  router.get('/approvals/waiting', async (req, res) => {
    const project = typeof req.query.project === 'string' && req.query.project ? req.query.project : ctx.defaultProject;
    const caller = callerWithGroups(ctx, res);
    res.json({ caller, approvals: await waitingApprovals(ctx, project, caller) } satisfies ResponseOf<'GET /approvals/waiting'>);
  });

  router.get('/runs/:id/shape', async (req, res) => {
    const run = await load(req.params.id);
    res.json((await runShape(store, run)) satisfies ResponseOf<'GET /runs/:id/shape'>);
  });

  router.post('/runs/:id/approvals/:job', async (req, res) => {
    const run = await load(req.params.id);
    const body = object(req.body);
    const decision = text(body, 'decision');
    if (decision !== 'approve' && decision !== 'reject') throw badRequest(`'decision' must be approve or reject, not '${decision}'`);
    const via = body.via === 'cli' || body.via === 'page' ? body.via : 'api';
    const { values, approvals } = await answerGate(ctx, run, req.params.job, decision, body.values, callerWithGroups(ctx, res), via);
    res.json({ run: await runViewIn(ctx, (await store.getRun(run.id)) ?? run), job: req.params.job, decision, values, approvals } satisfies ResponseOf<'POST /runs/:id/approvals/:job'>);
  });

  router.get('/workflows', async (req, res) => {
    const project = listedProject(ctx, req);
    const workflows = (await store.listWorkflows(project)).map((workflow) => ({
      ...workflow,
      lastRun: { ...workflow.lastRun, createdAt: workflow.lastRun.createdAt.toISOString() },
    }));
    res.json({ workflows } satisfies ResponseOf<'GET /workflows'>);
  });

  router.get('/workflows/:name/stats', async (req, res) => {
    res.json((await workflowStats(store, req, listedProject(ctx, req), ctx.now())) satisfies ResponseOf<'GET /workflows/:name/stats'>);
  });

  // What the page's Start run needs: the workflow as its last run ran it, and the form its declared inputs make.
  router.get('/workflows/:name', async (req, res) => {
    const found = (await store.listWorkflows(listedProject(ctx, req))).find((workflow) => workflow.name === req.params.name);
    const last = found && (await store.getRun(found.lastRun.id));
    if (!found || !last) throw notFound(`workflow ${req.params.name}`);
    const source = { workflow: last.workflow, interpreter: last.interpreter, script: last.script, cwd: last.cwd, project: last.project };
    res.json({
      workflow: { ...found, lastRun: { ...found.lastRun, createdAt: found.lastRun.createdAt.toISOString() } },
      source,
      form: unprocessable('invalid_workflow', () => startForm(source)),
    } satisfies ResponseOf<'GET /workflows/:name'>);
  });

  return router;
}
