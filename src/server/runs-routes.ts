import { journalView } from '../engine/journal-view.js';
import { Router } from 'express';
import { submitRun } from '../engine/admission.js';
import { newRunId } from '../common/ids.js';
import { attachCheckout, copyCheckout } from './checkout-store.js';
import { cancelRun } from '../engine/cancel.js';
import { substateOf } from '../engine/substate.js';
import { signalRun } from '../engine/wake.js';
import { resolve } from 'node:path';
import { documentAdmission, readWorkflowFile } from '../workflow-file/check.js';
import { rerunRun, rerunStart } from '../engine/rerun.js';
import { runsInProcess } from '../common/workflow-file.js';
import { TERMINAL_STATUSES, type RunRecord, type RunSearch, type RunSort, type RunStatus, type ScriptSource } from '../store/types.js';
import { object, optionalNumber, optionalText, queryInteger, queryTime, scriptSource, text } from './body.js';
import type { Store } from '../store/store.js';
import type { ResponseOf, Run, RunResource, RunWithScript } from '../api/responses.js';
import type { ServerContext } from './context.js';
import { listedProject } from './listed-project.js';
import { callerOf } from './caller.js';
import { HttpError, badRequest, conflict, notFound, unprocessable } from './http-error.js';

const STATUSES: RunStatus[] = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];

const iso = (date: Date | null): string | null => date && date.toISOString();

/** A run as the API shows it (its times as JSON writes them, in the same places); the script text and its reruns only when asked for one run. */
export function runView(run: RunRecord): Run;
export function runView(run: RunRecord, reruns: string[]): RunWithScript;
export function runView(run: RunRecord, reruns?: string[]): Run | RunWithScript {
  const { script, ...rest } = run;
  const view: Run = {
    ...rest,
    wakeAt: iso(rest.wakeAt),
    createdAt: rest.createdAt.toISOString(),
    updatedAt: rest.updatedAt.toISOString(),
    finishedAt: iso(rest.finishedAt),
    substate: substateOf(run),
  };
  return reruns ? { ...view, script, reruns } : view;
}

/** runView of each run, with its Run resource where the server knows them (the operator). */
export async function runViews(ctx: ServerContext, runs: RunRecord[]): Promise<Run[]> {
  const resources = runs.length > 0 ? await ctx.runResources?.(runs.map((run) => run.id)) : undefined;
  return runs.map((run) => withResource(runView(run), resources?.get(run.id)));
}

/** One run's runView, with its Run resource where the server knows it. */
export async function runViewIn(ctx: ServerContext, run: RunRecord): Promise<Run> {
  return withResource(runView(run), await resourceOf(ctx, run.id));
}

async function resourceOf(ctx: ServerContext, runId: string): Promise<RunResource | undefined> {
  return (await ctx.runResources?.([runId]))?.get(runId);
}

function withResource<T extends Run>(view: T, resource: RunResource | undefined): T {
  return resource ? { ...view, resource } : view;
}

/** The run a route's path names, or a 404 saying which. */
export async function loadRun(store: Store, id: string): Promise<RunRecord> {
  const run = await store.getRun(id);
  if (!run) throw notFound(`run ${id}`);
  return run;
}

export function runsRoutes(ctx: ServerContext): Router {
  const router = Router();
  const { store } = ctx;

  const load = (id: string): Promise<RunRecord> => loadRun(store, id);

  router.post('/runs', async (req, res) => {
    const body = object(req.body);
    const throttleBody = body.throttle === undefined || body.throttle === null ? null : object(body.throttle);
    const throttle = throttleBody && {
      limit: optionalNumber(throttleBody, 'limit', 1) ?? 1,
      periodMs: optionalNumber(throttleBody, 'periodMs', 1) ?? 60_000,
      key: text(throttleBody, 'key'),
    };
    const source = scriptSource(body);
    const input = body.input ?? null;
    const project = optionalText(body, 'project') ?? ctx.defaultProject;
    // A bundle uploaded by `POST /v1/checkouts`, given to the run before the run exists, so its first pass finds it.
    const checkout = optionalText(body, 'checkout');
    const runId = checkout === null ? undefined : newRunId(ctx.env, project);
    if (checkout !== null && runId && !(await attachCheckout(store, checkout, runId))) {
      throw badRequest(`no checkout '${checkout}': upload the bundle with POST /v1/checkouts first`);
    }
    // A pipeline's own concurrency and throttle come from its document, filled in from the input.
    const rules = runsInProcess(source) ? unprocessable('invalid_pipeline', () => documentAdmission(source.script, source.workflow, input)) : null;
    const { run, created, cancelled } = await submitRun(
      store,
      {
        env: ctx.env,
        project,
        ...(runId ? { runId } : {}),
        source,
        input,
        idempotencyKey: optionalText(body, 'idempotencyKey'),
        throttle: rules?.throttle ?? throttle,
        concurrency: rules?.concurrency ?? null,
        lenient: body.lenient === true,
        submittedBy: callerOf(ctx, res),
      },
      ctx.now(),
    );
    for (const id of cancelled) ctx.abortPass(id);
    ctx.poke();
    res.status(created ? 201 : 200).json({ run: await runViewIn(ctx, run), created } satisfies ResponseOf<'POST /runs'>);
  });

  router.get('/runs', async (req, res) => {
    const status = typeof req.query.status === 'string' ? req.query.status.split(',') : undefined;
    const unknown = status?.find((value) => !STATUSES.includes(value as RunStatus));
    if (unknown) throw badRequest(`unknown status '${unknown}'; use ${STATUSES.join(', ')}`);
    const project = listedProject(ctx, req);
    const given = (name: string): string | undefined => (typeof req.query[name] === 'string' && req.query[name] ? req.query[name] : undefined);
    const parent = given('parent');
    const before = given('before');
    const workflow = given('workflow');
    const subject = given('subject');
    const found = given('q');
    const since = queryTime(req.query, 'since');
    const until = queryTime(req.query, 'until');
    const search: RunSearch = {
      ...(project ? { project } : {}),
      ...(workflow ? { workflow } : {}),
      ...(subject ? { subject } : {}),
      ...(parent === 'none' ? { rootsOnly: true } : parent ? { parentId: parent } : {}),
      ...(found ? { text: found } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
    };
    const page = await store.pageRuns({
      ...search,
      ...(status ? { status: status as RunStatus[] } : {}),
      ...(before ? { before } : {}),
      sort: (given('sort') ?? '-created') as RunSort,
      limit: queryInteger(req.query, 'limit', 100, 1, 1000),
    });
    // The counts leave the status out, so each status's chip says what choosing it would show.
    const counts = req.query.counts === 'true' ? { counts: await store.countRuns(search) } : {};
    res.json({ runs: await runViews(ctx, page.runs), next: page.next, ...counts } satisfies ResponseOf<'GET /runs'>);
  });

  router.get('/runs/:id', async (req, res) => {
    const run = await load(req.params.id);
    res.json({ run: withResource(runView(run, await store.listReruns(run.id)), await resourceOf(ctx, run.id)) } satisfies ResponseOf<'GET /runs/:id'>);
  });

  // A new run of the same definition, from the top or from a step (engine/rerun.ts); authorized as a submit (access.ts).
  router.post('/runs/:id/rerun', async (req, res) => {
    const old = await load(req.params.id);
    const body = object(req.body ?? {});
    const input = 'input' in body ? body.input : old.input;
    const source = body.latest === true ? latestSource(old) : { workflow: old.workflow, interpreter: old.interpreter, script: old.script, cwd: old.cwd, runner: old.runner };
    const rules = runsInProcess(source) ? unprocessable('invalid_pipeline', () => documentAdmission(source.script, source.workflow, input)) : null;
    const fromStep = optionalText(body, 'fromStep');
    // The bundle (`--with DIR`) goes with the rerun, given before the run exists as a submit's is;
    // the step is checked first, so a refused rerun leaves no copy behind.
    if (fromStep !== null) rerunStart(old, await store.readJournal(old.id), fromStep);
    const runId = newRunId(ctx.env, old.project);
    await copyCheckout(store, old.id, runId);
    const rerun = { fromStep, source, input, admission: { runId, env: ctx.env, concurrency: rules?.concurrency ?? null } };
    const { run, cancelled } = await rerunRun(store, old, rerun, ctx.now());
    for (const id of cancelled) ctx.abortPass(id);
    ctx.poke();
    res.status(201).json({ run: await runViewIn(ctx, run) } satisfies ResponseOf<'POST /runs/:id/rerun'>);
  });

  router.post('/runs/:id/cancel', async (req, res) => {
    const run = await load(req.params.id);
    const cancelled = await cancelRun(store, run.id, ctx.now());
    for (const id of cancelled) ctx.abortPass(id);
    ctx.poke();
    res.json({ run: await runViewIn(ctx, (await store.getRun(run.id)) ?? run), cancelled: cancelled.length > 0 } satisfies ResponseOf<'POST /runs/:id/cancel'>);
  });

  router.get('/runs/:id/logs', async (req, res) => {
    const run = await load(req.params.id);
    const lines = await store.readLogs(run.id, queryInteger(req.query, 'after', 0, 0, Number.MAX_SAFE_INTEGER));
    const logs = lines.map((line) => ({ ...line, at: line.at.toISOString() }));
    res.json({ logs, run: await runViewIn(ctx, run) } satisfies ResponseOf<'GET /runs/:id/logs'>);
  });

  router.get('/runs/:id/journal', async (req, res) => {
    const run = await load(req.params.id);
    res.json({ journal: journalView(await store.readJournal(run.id)) } satisfies ResponseOf<'GET /runs/:id/journal'>);
  });

  router.post('/runs/:id/signals', async (req, res) => {
    const run = await load(req.params.id);
    const body = object(req.body);
    const name = text(body, 'name');
    // Signals queue, but an ended run takes none: "queued" would be a promise nobody keeps.
    if (TERMINAL_STATUSES.includes(run.status)) throw conflict('run_ended', `run ${run.id} has ended (${run.status}); a signal would never be taken`);
    const payload = body.payload === undefined || body.payload === null ? '' : body.payload;
    await signalRun(store, run.id, name, typeof payload === 'string' ? payload : JSON.stringify(payload), ctx.now());
    ctx.poke();
    res.status(202).json({ queued: true, run: run.id, name } satisfies ResponseOf<'POST /runs/:id/signals'>);
  });

  return router;
}

/**
 * `--latest`: the run's workflow file as it is now, where it was submitted from (spool dev, whose
 * passes run there too). A run with no such directory (a cluster's) has no file to read here.
 */
function latestSource(old: RunRecord): ScriptSource {
  if (old.cwd === null) throw new HttpError(422, 'no_latest', `${old.id} was not submitted from a directory this server reads, so it has no latest workflow file here`);
  const file = resolve(old.cwd, old.workflow);
  return { workflow: old.workflow, cwd: old.cwd, runner: old.runner, ...unprocessable('no_latest', () => readWorkflowFile(file)) };
}
