import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { eventArrived } from '../engine/events.js';
import { checkCron, nextTick, triggerSchedule } from '../engine/schedules.js';
import { object, optionalNumber, optionalText, scriptSource, text } from './body.js';
import type { Handler, ResponseOf, Schedule } from '../api/responses.js';
import type { HandlerRecord, ScheduleRecord } from '../store/types.js';
import type { ServerContext } from './context.js';
import { badRequest, notFound, unprocessable } from './http-error.js';

/** A stored handler as the list shows it (the store reads every field; its type leaves `runner` optional for writers). */
const handlerView = (handler: HandlerRecord): Handler => ({ ...handler, runner: handler.runner ?? null });

/** A stored schedule as the list shows it, its next tick as JSON writes a time. */
const scheduleView = (schedule: ScheduleRecord): Schedule => ({
  ...schedule,
  nextAt: schedule.nextAt.toISOString(),
  runner: schedule.runner ?? null,
  input: schedule.input ?? null,
  overlap: schedule.overlap ?? 'skip',
});

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

  router.put('/handlers/:name', async (req, res) => {
    const body = object(req.body);
    const handler = { project: projectOf(body.project), name: req.params.name, eventType: text(body, 'eventType'), ...scriptSource(body) };
    await store.putHandler(handler);
    res.json({ handler } satisfies ResponseOf<'PUT /handlers/:name'>);
  });

  router.delete('/handlers/:name', async (req, res) => {
    if (!(await store.deleteHandler(projectOf(req.query.project), req.params.name))) throw notFound(`handler ${req.params.name}`);
    res.json({ deleted: req.params.name } satisfies ResponseOf<'DELETE /handlers/:name'>);
  });

  router.get('/schedules', async (req, res) => {
    res.json({ schedules: (await store.listSchedules(projectOf(req.query.project))).map(scheduleView) } satisfies ResponseOf<'GET /schedules'>);
  });

  router.put('/schedules/:name', async (req, res) => {
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

  router.delete('/schedules/:name', async (req, res) => {
    if (!(await store.deleteSchedule(projectOf(req.query.project), req.params.name))) throw notFound(`schedule ${req.params.name}`);
    res.json({ deleted: req.params.name } satisfies ResponseOf<'DELETE /schedules/:name'>);
  });

  router.post('/schedules/:name/trigger', async (req, res) => {
    const runId = await triggerSchedule(store, ctx.env, projectOf(req.query.project), req.params.name, ctx.now());
    if (!runId) throw notFound(`schedule ${req.params.name}`);
    ctx.poke();
    res.status(201).json({ run: runId } satisfies ResponseOf<'POST /schedules/:name/trigger'>);
  });

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
