import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { deliverEvent, wakeEventWaiters } from '../engine/events.js';
import { checkCron, nextTick, triggerSchedule } from '../engine/schedules.js';
import { object, optionalNumber, optionalText, scriptSource, text } from './body.js';
import type { ServerContext } from './context.js';
import { badRequest, notFound, unprocessable } from './http-error.js';

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
    const runs = await deliverEvent(store, ctx.env, event);
    await wakeEventWaiters(store, event, ctx.now());
    ctx.poke();
    res.status(202).json({ event, runs });
  });

  router.get('/handlers', async (req, res) => {
    res.json({ handlers: await store.listHandlers(projectOf(req.query.project)) });
  });

  router.put('/handlers/:name', async (req, res) => {
    const body = object(req.body);
    const handler = { project: projectOf(body.project), name: req.params.name, eventType: text(body, 'eventType'), ...scriptSource(body) };
    await store.putHandler(handler);
    res.json({ handler });
  });

  router.delete('/handlers/:name', async (req, res) => {
    if (!(await store.deleteHandler(projectOf(req.query.project), req.params.name))) throw notFound(`handler ${req.params.name}`);
    res.json({ deleted: req.params.name });
  });

  router.get('/schedules', async (req, res) => {
    res.json({ schedules: await store.listSchedules(projectOf(req.query.project)) });
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
    res.json({ schedule });
  });

  router.delete('/schedules/:name', async (req, res) => {
    if (!(await store.deleteSchedule(projectOf(req.query.project), req.params.name))) throw notFound(`schedule ${req.params.name}`);
    res.json({ deleted: req.params.name });
  });

  router.post('/schedules/:name/trigger', async (req, res) => {
    const runId = await triggerSchedule(store, ctx.env, projectOf(req.query.project), req.params.name, ctx.now());
    if (!runId) throw notFound(`schedule ${req.params.name}`);
    ctx.poke();
    res.status(201).json({ run: runId });
  });

  router.get('/state/:entity', async (req, res) => {
    res.json({ cells: await store.listCells(projectOf(req.query.project), `entity:${req.params.entity}`) });
  });

  router.get('/state/:entity/:key', async (req, res) => {
    const cell = await store.getCell(projectOf(req.query.project), `entity:${req.params.entity}`, req.params.key);
    if (!cell) throw notFound(`cell ${req.params.key} of ${req.params.entity}`);
    res.json({ cell });
  });

  router.put('/state/:entity/:key', async (req, res) => {
    const body = object(req.body);
    const value = body.value;
    if (typeof value !== 'string') throw badRequest(`'value' is required and must be a string`);
    res.json({ cell: await store.setCell(projectOf(body.project), `entity:${req.params.entity}`, req.params.key, value) });
  });

  router.delete('/state/:entity/:key', async (req, res) => {
    const deleted = await store.deleteCell(projectOf(req.query.project), `entity:${req.params.entity}`, req.params.key);
    if (!deleted) throw notFound(`cell ${req.params.key} of ${req.params.entity}`);
    res.json({ deleted: req.params.key });
  });

  return router;
}
