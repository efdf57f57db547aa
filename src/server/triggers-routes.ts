import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { derivedRunId } from '../common/ids.js';
import { eventArrived } from '../engine/events.js';
import { checkCron, nextTick, resumeSchedule, triggerSchedule } from '../engine/schedules.js';
import { object, optionalNumber, optionalText, queryInteger, scriptSource, text } from './body.js';
import type { Handler, ResponseOf, RunSummary, Schedule } from '../api/responses.js';
import type { HandlerRecord, RunSummary as RunSummaryRecord, ScheduleRecord } from '../store/types.js';
import type { ServerContext } from './context.js';
import { badRequest, conflict, notFound, unprocessable } from './http-error.js';

/** A stored handler as the list shows it (the store reads every field; its type leaves `runner` optional for writers). */
const handlerView = (handler: HandlerRecord): Handler => ({ ...handler, runner: handler.runner ?? null });

/** How many of each schedule's last runs the list shows. */
const RECENT_RUNS = 5;

const runSummaryView = (run: RunSummaryRecord): RunSummary => ({ ...run, createdAt: run.createdAt.toISOString() });

/** A stored schedule as the list shows it, with its last runs; a suspended one has no next tick. */
const scheduleView = (schedule: ScheduleRecord, recentRuns: RunSummaryRecord[]): Schedule => {
  const { suspendedAt, ...fields } = schedule;
  return {
    ...fields,
    nextAt: suspendedAt ? null : schedule.nextAt.toISOString(),
    runner: schedule.runner ?? null,
    input: schedule.input ?? null,
    overlap: schedule.overlap ?? 'skip',
    suspendedAt: suspendedAt?.toISOString() ?? null,
    recentRuns: recentRuns.map(runSummaryView),
  };
};

/** Events, and what starts runs from them or from the clock: handlers and schedules. */
export function triggersRoutes(ctx: ServerContext): Router {
  const router = Router();
  const { store } = ctx;
  const projectOf = (value: unknown): string => (typeof value === 'string' && value ? value : ctx.defaultProject);

  router.post('/events', async (req, res) => {
    const body = object(req.body);
    const event = await store.emitEvent({
      id: optionalText(body, 'id') ?? `evt-${randomUUID()}`,
      project: projectOf(body.project),
      type: text(body, 'type'),
      subject: optionalText(body, 'subject'),
      payload: body.payload ?? null,
    });
    const runs = await eventArrived(store, ctx.env, event, ctx.now());
    ctx.poke();
    res.status(202).json({ event: { ...event, emittedAt: event.emittedAt.toISOString() }, runs } satisfies ResponseOf<'POST /events'>);
  });

  router.get('/handlers', async (req, res) => {
    res.json({ handlers: (await store.listHandlers(projectOf(req.query.project))).map(handlerView) } satisfies ResponseOf<'GET /handlers'>);
  });

  // A handler's events, newest first: the events of its type, each with the run it started for this
  // handler (whose id the event id and the handler name make, as deliverEvent made it).
  router.get('/handlers/:name/events', async (req, res) => {
    const project = projectOf(req.query.project);
    const handler = (await store.listHandlers(project)).find((candidate) => candidate.name === req.params.name);
    if (!handler) throw notFound(`handler ${req.params.name}`);
    const limit = queryInteger(req.query, 'limit', 20, 1, 100);
    const before = req.query.before === undefined ? null : queryInteger(req.query, 'before', 0, 1, Number.MAX_SAFE_INTEGER);
    const events = await store.listEvents(project, handler.eventType, { beforeSeq: before, limit });
    const runIdOf = (eventId: string) => derivedRunId(ctx.env, project, eventId, handler.name);
    const runs = new Map((await store.runSummaries(events.map((event) => runIdOf(event.id)))).map((run) => [run.id, runSummaryView(run)]));
    res.json({
      events: events.map((event) => ({
        seq: event.seq,
        id: event.id,
        type: event.type,
        subject: event.subject,
        emittedAt: event.emittedAt.toISOString(),
        run: runs.get(runIdOf(event.id)) ?? null,
      })),
      next: events.length === limit ? String(events.at(-1)?.seq) : null,
    } satisfies ResponseOf<'GET /handlers/:name/events'>);
  });

  /**
   * On a cluster the Handler or Schedule resource says what there is (the operator writes the store
   * from it): a change made here would be overwritten, or would leave `kubectl get` saying otherwise.
   */
  const resourceOnCluster = (instead: (name: string) => string) => (req: Request<{ name: string }>, _res: Response, next: () => void) => {
    if (!ctx.triggersAreResources) return next();
    throw conflict('managed_by_resource', `on a cluster, ${instead(req.params.name)}`);
  };
  const handlerResource = resourceOnCluster((name) => `handler ${name} is a Handler resource: kubectl apply or delete it (docs/crds.md)`);
  const scheduleResource = resourceOnCluster((name) => `schedule ${name} is a Schedule resource: kubectl apply or delete it (docs/crds.md)`);
  const scheduleSuspension = resourceOnCluster(
    (name) => `a Schedule's spec.suspend says whether it ticks: kubectl patch schedule ${name} --type merge -p '{"spec":{"suspend":true}}' (false to resume)`,
  );

  router.put('/handlers/:name', handlerResource, async (req, res) => {
    const body = object(req.body);
    const handler = { project: projectOf(body.project), name: req.params.name, eventType: text(body, 'eventType'), ...scriptSource(body) };
    await store.putHandler(handler);
    res.json({ handler } satisfies ResponseOf<'PUT /handlers/:name'>);
  });

  router.delete('/handlers/:name', handlerResource, async (req, res) => {
    if (!(await store.deleteHandler(projectOf(req.query.project), req.params.name))) throw notFound(`handler ${req.params.name}`);
    res.json({ deleted: req.params.name } satisfies ResponseOf<'DELETE /handlers/:name'>);
  });

  /** The project's schedules as the list shows them, each with its last runs. */
  const schedulesOf = async (project: string): Promise<Schedule[]> => {
    const recent = await store.recentScheduleRuns(project, RECENT_RUNS);
    return (await store.listSchedules(project)).map((schedule) => scheduleView(schedule, recent.get(schedule.name) ?? []));
  };

  router.get('/schedules', async (req, res) => {
    res.json({ schedules: await schedulesOf(projectOf(req.query.project)) } satisfies ResponseOf<'GET /schedules'>);
  });

  router.put('/schedules/:name', scheduleResource, async (req, res) => {
    const body = object(req.body);
    const everyMs = optionalNumber(body, 'everyMs', 1);
    const cron = optionalText(body, 'cron');
    if ((everyMs === null) === (cron === null)) throw badRequest(`give exactly one of 'everyMs' and 'cron'`);
    if (cron !== null) unprocessable('invalid_cron', () => checkCron(cron));
    const cadence = cron !== null ? { everyMs: null, cron } : { everyMs: everyMs ?? 0, cron: null };
    const schedule = {
      project: projectOf(body.project),
      name: req.params.name,
      ...cadence,
      ...scriptSource(body),
      nextAt: nextTick(cadence, ctx.now()),
    };
    await store.putSchedule(schedule);
    ctx.poke();
    res.json({ schedule: { ...schedule, nextAt: schedule.nextAt.toISOString() } } satisfies ResponseOf<'PUT /schedules/:name'>);
  });

  router.delete('/schedules/:name', scheduleResource, async (req, res) => {
    if (!(await store.deleteSchedule(projectOf(req.query.project), req.params.name))) throw notFound(`schedule ${req.params.name}`);
    res.json({ deleted: req.params.name } satisfies ResponseOf<'DELETE /schedules/:name'>);
  });

  router.post('/schedules/:name/trigger', async (req, res) => {
    const runId = await triggerSchedule(store, ctx.env, projectOf(req.query.project), req.params.name, ctx.now());
    if (!runId) throw notFound(`schedule ${req.params.name}`);
    ctx.poke();
    res.status(201).json({ run: runId } satisfies ResponseOf<'POST /schedules/:name/trigger'>);
  });

  // Suspended, a schedule makes no ticks (a trigger still starts a run); resumed, its next tick is
  // the first after now: the ticks it missed are not made up.
  const suspension = (change: (project: string, name: string) => Promise<ScheduleRecord | null>) => async (req: Request<{ name: string }>, res: Response) => {
    const project = projectOf(req.query.project);
    const { name } = req.params;
    const changed = await change(project, name);
    ctx.poke();
    const schedule = changed && (await schedulesOf(project)).find((candidate) => candidate.name === name);
    if (!schedule) throw notFound(`schedule ${name}`);
    res.json({ schedule } satisfies ResponseOf<'POST /schedules/:name/suspend'>);
  };
  router.post('/schedules/:name/suspend', scheduleSuspension, suspension((project, name) => store.suspendSchedule(project, name, ctx.now())));
  router.post('/schedules/:name/resume', scheduleSuspension, suspension((project, name) => resumeSchedule(store, project, name, ctx.now())));

  router.get('/state/:entity', async (req, res) => {
    res.json({ cells: await store.listCells(projectOf(req.query.project), `entity:${req.params.entity}`) } satisfies ResponseOf<'GET /state/:entity'>);
  });

  router.get('/state/:entity/:key', async (req, res) => {
    const cell = await store.getCell(projectOf(req.query.project), `entity:${req.params.entity}`, req.params.key);
    if (!cell) throw notFound(`cell ${req.params.key} of ${req.params.entity}`);
    res.json({ cell } satisfies ResponseOf<'GET /state/:entity/:key'>);
  });

  router.put('/state/:entity/:key', async (req, res) => {
    const body = object(req.body);
    const value = body.value;
    if (typeof value !== 'string') throw badRequest(`'value' is required and must be a string`);
    res.json({ cell: await store.setCell(projectOf(body.project), `entity:${req.params.entity}`, req.params.key, value) } satisfies ResponseOf<'PUT /state/:entity/:key'>);
  });

  router.delete('/state/:entity/:key', async (req, res) => {
    const deleted = await store.deleteCell(projectOf(req.query.project), `entity:${req.params.entity}`, req.params.key);
    if (!deleted) throw notFound(`cell ${req.params.key} of ${req.params.entity}`);
    res.json({ deleted: req.params.key } satisfies ResponseOf<'DELETE /state/:entity/:key'>);
  });

  return router;
}
