import { approvalCount } from '../../api/approval-count.js';
import { LogPrinter } from './log-format.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { Command } from 'commander';
import { formatDuration, parseDuration } from '../../common/duration.js';
import { SpoolError, UsageError, ensureError } from '../../common/errors.js';
import { runPath } from './http.js';
import { age, journalTable, table } from './format.js';
import { lastFailedCommand } from '../../engine/failed-command.js';
import { isCluster, targetOf, type Target } from './target.js';
import { runsInProcess } from '../../common/workflow-file.js';
import { RUN_SORTS, type GateAnswerView, type JournalEntry, type ResponseOf } from '../../api/responses.js';
import { runsSearchQuery } from './runs-search.js';
import { yaml } from '../../common/yaml.js';
import type { RequestOf } from '../../api/requests.js';

type ClusterModule = typeof import('../cluster/cluster-runs.js');
type Options = Record<string, string | boolean | undefined>;
type SetExit = (code: number) => void;

const TERMINAL = ['succeeded', 'failed', 'cancelled'];
const out = (text: string | Uint8Array): void => void process.stdout.write(text);
const json = (value: unknown): void => out(`${JSON.stringify(value, null, 2)}\n`);
/** `decided`: the gate's final answer came before this one (a gate with approvers counts the ones before it). */
const answerLine = (answer: GateAnswerView, decided: boolean, approvers: boolean): string =>
  `${answer.decision} by ${answer.by ?? 'someone'} (${answer.via}) at ${answer.at}` +
  (answer.values && Object.keys(answer.values).length ? ` ${JSON.stringify(answer.values)}` : '') +
  (answer.final ? '' : !decided && approvers ? ' — counted' : approvers ? ' — refused: the gate was already answered' : ' — refused: the first answer is final');

/** The status a person reads: a pending or waiting run whose substate is queued is `queued`, in runs and status alike. */
const shownStatus = (run: { status?: unknown; substate?: unknown }): string => (run.substate === 'queued' ? 'queued' : String(run.status));

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

async function source(file: string) {
  const { readWorkflowFile } = await import('../../workflow-file/check.js');
  return { workflow: file, ...readWorkflowFile(file), cwd: process.cwd() };
}

function parseThrottle(spec: string | undefined, key: string | undefined) {
  if (spec === undefined) {
    if (key !== undefined) throw new UsageError('--throttle-key needs --throttle N/PERIOD');
    return null;
  }
  const match = /^(\d+)\/(.+)$/.exec(spec);
  if (!match || Number(match[1]) < 1) throw new UsageError(`--throttle takes N/PERIOD, such as 6/1m, not '${spec}'`);
  return { limit: Number(match[1]), periodMs: parseDuration(match[2] ?? ''), key: key ?? 'default' };
}

/** Prints a run's log as it grows until the run ends; exits with the run's outcome. */
export async function follow(target: Target, runId: string, printer = new LogPrinter({})): Promise<number> {
  let after = 0;
  for (;;) {
    const { logs, run } = await target.api<ResponseOf<'GET /runs/:id/logs'>>('GET', `${runPath(runId)}/logs?after=${after}`);
    for (const line of logs) {
      out(printer.format(line));
      after = line.seq;
    }
    if (TERMINAL.includes(run.status) && logs.length === 0) {
      process.stderr.write(run.status === 'succeeded' ? `  ${run.id} succeeded\n` : `  ${run.id} ${run.status}: ${run.error ?? ''}\n`);
      return run.status === 'succeeded' ? 0 : 1;
    }
    if (logs.length === 0) await delay(150);
  }
}

export function registerServerCommands(program: Command, setExit: SetExit): void {
  const withServer = (command: Command): Command =>
    command
      .option('--server <url>', 'the server to talk to (default $SPOOL_SERVER or http://127.0.0.1:7456)')
      .option('--kubeconfig <path>', 'talk to a cluster: this kubeconfig (default $KUBECONFIG or ~/.kube/config)')
      .option('--context <name>', "talk to a cluster: this kubeconfig context (default: the kubeconfig's current one)")
      .option('-n, --namespace <ns>', "talk to a cluster: this namespace (default: the context's, or default)")
      .option('--operator <ns/service>', "the operator's API service on the cluster", 'hyperspool-system/hyperspool-operator')
      .option('--as <user>', 'act as this person: on a cluster by impersonation (RBAC must let you impersonate them); on spool dev, which trusts its local callers, as given');
  const target = (options: Options): Promise<Target> => targetOf(options);
  const cluster = async (options: Options) => {
    const { ClusterTarget } = await import('../cluster/kube-target.js');
    const runs: ClusterModule = await import('../cluster/cluster-runs.js');
    return { target: new ClusterTarget(options), runs };
  };
  const notOnCluster = (options: Options, what: string): void => {
    if (isCluster(options)) throw new UsageError(`on a cluster, ${what}`);
  };

  withServer(
    program
      .command('submit <file>')
      .description('start a run of a script on the server')
      .option('--follow', 'print the run log until the run ends, and exit with its outcome')
      .option('--input <json>', 'the input the script reads from $SPOOL_INPUT_FILE')
      .option('--idempotency-key <key>', 'answer a repeat submit with the first run')
      .option('--throttle <n/period>', 'start at most N runs per period under --throttle-key, evenly spaced')
      .option('--throttle-key <key>', 'the budget the throttle counts against')
      .option('--lenient', 'do not fail a run whose replay reaches a different call')
      .option('--workflow <name>', "on a cluster: the Workflow FILE's script goes into (default: FILE's name)")
      .option('--with <dir>', "bundle the files under DIR (minus .gitignore's) with the run, for 'spool checkout'")
      .option('--json', 'print JSON'),
  ).action(async (file: string, options: Options) => {
    const { parseInput } = await import('../../dev/run-local.js');
    const input = parseInput(str(options.input));
    let run: { id: string };
    // An empty key would name every keyless submit after the first the same run (issue 28, bug 8).
    if (options.idempotencyKey === '') throw new UsageError('--idempotency-key takes a key of one or more characters');
    let created = true;
    let to: Target;
    if (isCluster(options)) {
      if (options.throttle || options.throttleKey) throw new UsageError('on a cluster, a throttle belongs in the pipeline document (throttle:), not on submit');
      if (options.with !== undefined) throw new UsageError("--with is not supported on a cluster yet: bundle with 'spool run --with' or 'spool dev' (docs/artifacts.md)");
      const { target: clusterTarget, runs } = await cluster(options);
      to = clusterTarget;
      run = await runs.submitToCluster(clusterTarget, file, { input, lenient: options.lenient === true, ...(str(options.idempotencyKey) ? { idempotencyKey: str(options.idempotencyKey) } : {}), ...(str(options.workflow) ? { workflow: str(options.workflow) } : {}) });
    } else {
      to = await target(options);
      const script = await source(file);
      const withDir = str(options.with);
      const checkout = withDir === undefined ? null : await (await import('./checkout-upload.js')).uploadCheckout(str(options.server), withDir);
      const body = {
        ...script,
        ...(checkout ? { checkout } : {}),
        input,
        idempotencyKey: str(options.idempotencyKey) ?? null,
        throttle: parseThrottle(str(options.throttle), str(options.throttleKey)),
        lenient: options.lenient === true,
      } satisfies RequestOf<'POST /runs'>;
      ({ run, created } = await to.api<ResponseOf<'POST /runs'>>('POST', '/runs', body));
    }
    if (options.json) json({ run, created });
    else if (options.follow) process.stderr.write(`  run: ${run.id}${created ? '' : ' (existing run for this idempotency key)'}\n`);
    else out(`${run.id}\n`);
    if (options.follow) setExit(await follow(to, run.id));
  });

  withServer(
    program
      .command('runs')
      .description('list runs')
      .option('--status <list>', 'only these statuses, comma-separated')
      .option('--all', 'on a cluster, also the runs whose Run resource was deleted (kept in the store); locally every run is listed anyway')
      .option('--search <text>', "only runs with this text, in any case, in their id, workflow, subject, input, outputs, a step's label or an annotation")
      .option('--since <time>', 'only runs created since then: a duration back from now (30m, 2h, 7d) or an ISO 8601 time')
      .option('--until <time>', 'only runs created before then: a duration back from now or an ISO 8601 time')
      .option('--sort <order>', `the order: ${RUN_SORTS.join(', ')} (default -created, newest first; - is descending)`)
      .option('--json', 'print JSON (the same as -o json)')
      .option('-o, --output <format>', 'json, yaml, name (one run a line) or wide (adds the error)')
      .option('-w, --watch', 'after the list, print a run again each time its status, awaiting or passes change'),
  ).action(async (options: Options) => {
    const format = options.json ? 'json' : (str(options.output) ?? 'table');
    if (!['table', 'json', 'yaml', 'name', 'wide'].includes(format)) throw new UsageError(`-o takes json, yaml, name or wide, not '${format}'`);
    const status = str(options.status);
    const search = new URLSearchParams(runsSearchQuery({ search: str(options.search), since: str(options.since), until: str(options.until), sort: str(options.sort) })).toString();
    const headers = ['RUN', 'STATUS', 'AWAITING', 'PASSES', 'AGE', 'WORKFLOW'];
    const rows = async (): Promise<{ json: unknown; rows: string[][] }> => {
      if (isCluster(options)) {
        const { target: clusterTarget, runs } = await cluster(options);
        const listed = await runs.listClusterRuns(clusterTarget, { search, all: options.all === true, ...(status ? { statuses: status.split(',') } : {}) });
        return { json: listed, rows: listed.map((run) => [run.name, run.status, run.awaiting ?? '', String(run.passes), age(run.createdAt), run.workflow, run.error ?? '']) };
      }
      const query = [...(status ? [`status=${encodeURIComponent(status)}`] : []), ...(search ? [search] : [])].join('&');
      const { runs } = await (await target(options)).api<ResponseOf<'GET /runs'>>('GET', `/runs${query ? `?${query}` : ''}`);
      // A queued run (behind its concurrency group or over its rate) shows as queued, as the seeds say.
      return { json: runs, rows: runs.map((run) => [run.id, shownStatus(run), run.awaiting ?? '', String(run.passes), age(run.createdAt), run.workflow, run.error ?? '']) };
    };
    const first = await rows();
    if (format === 'json') return json(first.json);
    if (format === 'yaml') return out(yaml().stringify(first.json));
    if (format === 'name') return out(first.rows.map((row) => `${row[0] ?? ''}\n`).join(''));
    if (format === 'wide') return out(table([...headers, 'ERROR'], first.rows));
    out(table(headers, first.rows.map((row) => row.slice(0, headers.length))));
    if (options.watch) await watchRuns(first.rows, async () => (await rows()).rows.map((row) => row.slice(0, headers.length)), headers);
  });

  withServer(program.command('status <run>').description('show one run').option('--json', 'print JSON')).action(async (runId: string, options: Options) => {
    let run: Record<string, unknown>;
    if (isCluster(options)) {
      const { target: clusterTarget, runs } = await cluster(options);
      run = await runs.clusterRunStatus(clusterTarget, runId);
    } else {
      ({ run } = await (await target(options)).api<ResponseOf<'GET /runs/:id'>>('GET', runPath(runId)));
    }
    if (options.json) return json(run);
    const { script, ...shown } = run;
    void script;
    // As spool runs says it: a run queued behind its concurrency group or throttle is queued.
    shown.status = shownStatus(shown);
    const to = await target(options);
    const id = await to.runId(runId);
    // A running run says which call it is in: the journal's last call without a result.
    if (shown.status === 'running') {
      const { journal } = await to.api<ResponseOf<'GET /runs/:id/journal'>>('GET', `${runPath(id)}/journal`);
      const running = inProgress(journal);
      if (running) shown.running = running;
    }
    // A failed run says which step or activity failed last and the end of what it wrote to stderr.
    if (shown.status === 'failed') {
      const { journal } = await to.api<ResponseOf<'GET /runs/:id/journal'>>('GET', `${runPath(id)}/journal`);
      // `failedStep  book-car (exit 1): no cars left`, `failedActivity  fetch (exit 3): 503 from upstream`
      const failed = lastFailedCommand(journal);
      if (failed) shown[failed.what === 'step' ? 'failedStep' : 'failedActivity'] = `${failed.name} (exit ${failed.exitCode})${failed.said ? `: ${failed.said}` : ''}`;
    }
    for (const [key, value] of Object.entries(shown)) if (value !== null && value !== undefined) out(`${key.padEnd(15)} ${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`);
    // What the run stored with `spool artifact put` (docs/artifacts.md); `GET /v1/runs/:id/artifacts/:name` downloads one.
    // On a cluster, the aggregated API's runs/artifacts subresource.
    const { artifacts } = await to.api<ResponseOf<'GET /runs/:id/artifacts'>>('GET', `${runPath(id)}/artifacts`);
    artifacts.forEach((artifact, index) =>
      out(`${(index === 0 ? 'artifacts' : '').padEnd(15)} ${artifact.name}  ${artifact.size} bytes  sha256 ${artifact.sha256.slice(0, 12)}  ${artifact.contentType}\n`),
    );
    // Every answer its approval gates got (issue 28): the first is final, later ones were refused.
    if (runsInProcess({ interpreter: String(shown.interpreter) })) {
      const { approvals } = await to.api<ResponseOf<'GET /runs/:id/approvals'>>('GET', `${runPath(id)}/approvals`);
      approvals
        // `?? []`: a server from before answers were kept (issue 28) lists gates without them.
        .flatMap((gate) => {
          const final = (gate.answers ?? []).findIndex((answer) => answer.final);
          return (gate.answers ?? []).map((answer, index) => `${gate.job}: ${answerLine(answer, final !== -1 && index > final, Boolean(gate.approvers))}`);
        })
        .forEach((line, index) => out(`${(index === 0 ? 'answers' : '').padEnd(15)} ${line}\n`));
    }
  });

  withServer(program.command('journal <run>').description("show a run's journal").option('--json', 'print JSON')).action(async (runId: string, options: Options) => {
    const to = await target(options);
    const { journal } = await to.api<ResponseOf<'GET /runs/:id/journal'>>('GET', `${runPath(await to.runId(runId))}/journal`);
    if (options.json) return json(journal);
    out(journalTable(journal));
  });

  withServer(
    program
      .command('replay <run>')
      .description("replay a run's journal here with the current script (or --script's), running and changing nothing: does it still reach the calls the run recorded?")
      .option('--script <file>', "the script to replay (default: the run's workflow file, here or where it was submitted from)")
      .option('--lenient', 'show what a lenient replay would do: carry on past a call that is not the one recorded'),
  ).action(async (runId: string, options: Options) => {
    const to = await target(options);
    const id = await to.runId(runId);
    // As spool status and spool journal read them: on a cluster through the aggregated API, as the user.
    const { run } = await to.api<ResponseOf<'GET /runs/:id'>>('GET', runPath(id));
    const { journal } = await to.api<ResponseOf<'GET /runs/:id/journal'>>('GET', `${runPath(id)}/journal`);
    const { replayRun } = await import('../../dev/replay.js');
    setExit(await replayRun(run, journal, { ...(str(options.script) ? { script: str(options.script) } : {}), lenient: options.lenient === true }));
  });

  withServer(
    program
      .command('rerun <run>')
      .description("start a new run of a run's workflow, from the top or from a step: the journal before that step is kept, the step and all after run fresh")
      .option('--from-step <name>', "rerun from this step: the new run replays the old one's calls before its first call, then runs it with new idempotency keys")
      .option('--input <json>', "the new run's input (default: the old run's)")
      .option('--latest', "run the workflow file as it is now, not the script the old run was pinned to")
      .option('--follow', 'print the new run log until it ends, and exit with its outcome')
      .option('--json', 'print JSON'),
  ).action(async (runId: string, options: Options) => {
    const { parseInput } = await import('../../dev/run-local.js');
    const body: RequestOf<'POST /runs/:id/rerun'> = {
      ...(str(options.fromStep) !== undefined ? { fromStep: str(options.fromStep) } : {}),
      ...(str(options.input) !== undefined ? { input: parseInput(str(options.input)) } : {}),
      ...(options.latest ? { latest: true } : {}),
    };
    if (body.fromStep === '') throw new UsageError('--from-step takes the name of a step the run reached');
    // A run that is not there is the person's to fix here, as a step it never reached is.
    const notThere = (error: unknown): never => {
      throw error instanceof SpoolError && error.kind === 'not_found' ? new UsageError(error.message) : ensureError(error);
    };
    let to: Target;
    let run: { id: string };
    if (isCluster(options)) {
      // A new Run naming the old one in spec.rerunOf: the operator copies the journal prefix.
      const { target: clusterTarget, runs } = await cluster(options);
      to = clusterTarget;
      run = await runs.rerunOnCluster(clusterTarget, runId, { ...(body.fromStep ? { fromStep: body.fromStep } : {}), ...('input' in body ? { input: body.input } : {}), ...(body.latest ? { latest: true } : {}) }).catch(notThere);
    } else {
      to = await target(options);
      ({ run } = await to.api<ResponseOf<'POST /runs/:id/rerun'>>('POST', `${runPath(runId)}/rerun`, body).catch(notThere));
    }
    if (options.json) json(run);
    else if (options.follow) process.stderr.write(`  run: ${run.id} (a rerun of ${runId}${body.fromStep ? ` from step ${body.fromStep}` : ''})\n`);
    else out(`${run.id}\n`);
    if (options.follow) setExit(await follow(to, run.id));
  });

  withServer(
    program
      .command('logs <run>')
      .description("print a run's log")
      .option('--follow', 'keep printing until the run ends')
      .option('--timestamps', 'start each line with when it was logged')
      .option('--passes', 'print a line where each pass begins (a replay prints lines between calls again)'),
  ).action(async (runId: string, options: Options) => {
    const to = await target(options);
    const id = await to.runId(runId);
    const printer = new LogPrinter({ timestamps: options.timestamps === true, passes: options.passes === true });
    if (options.follow) return setExit(await follow(to, id, printer));
    const { logs } = await to.api<ResponseOf<'GET /runs/:id/logs'>>('GET', `${runPath(id)}/logs`);
    for (const line of logs) out(printer.format(line));
  });

  withServer(program.command('cancel <run>').description('cancel a run')).action(async (runId: string, options: Options) => {
    const to = await target(options);
    const { cancelled, run } = await to.api<ResponseOf<'POST /runs/:id/cancel'>>('POST', `${runPath(await to.runId(runId))}/cancel`);
    out(cancelled ? `cancelled ${run.id}\n` : `${run.id} had already ended (${run.status})\n`);
  });

  withServer(program.command('signal <run> <name> [payload]').description('send a run a signal; it queues until the run takes it')).action(
    async (runId: string, name: string, payload: string | undefined, options: Options) => {
      const to = await target(options);
      await to.api('POST', `${runPath(await to.runId(runId))}/signals`, { name, payload: payload ?? '' } satisfies RequestOf<'POST /runs/:id/signals'>);
      out(`signal ${name} queued for ${runId}\n`);
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    const command = program
      .command(`${decision} <run> <job>`)
      .description(decision === 'approve' ? 'approve a waiting approval gate' : 'reject an approval gate: cancels the run');
    if (decision === 'approve') {
      command.option('--set <field=value>', "a field of the gate's form (repeat for each)", (value: string, all: string[] = []) => [...all, value]);
    }
    withServer(command).action(async (runId: string, job: string, options: Options) => {
      const to = await target(options);
      const values: Record<string, string> = {};
      for (const pair of (options.set as unknown as string[] | undefined) ?? []) {
        const at = pair.indexOf('=');
        if (at <= 0) throw new UsageError(`--set takes field=value, not '${pair}'`);
        values[pair.slice(0, at)] = pair.slice(at + 1);
      }
      const body: RequestOf<'POST /runs/:id/approvals/:job'> = Object.keys(values).length > 0 ? { decision, values, via: 'cli' } : { decision, via: 'cli' };
      const answer = await to.api<Partial<ResponseOf<'POST /runs/:id/approvals/:job'>>>('POST', `${runPath(await to.runId(runId))}/approvals/${encodeURIComponent(job)}`, body);
      // A gate with approvers: how far it has got (a server from before them says nothing).
      const count = answer.approvals;
      const progress = count && decision === 'approve' ? ` (${approvalCount(count)}; ${count.counted < count.needed ? `waiting for ${count.needed - count.counted} more` : 'the gate opens'})` : '';
      out(`${decision === 'approve' ? 'approved' : 'rejected'} ${job} of ${runId}${progress}\n`);
    });
  }

  const event = program.command('event').description('events');
  withServer(
    event
      .command('emit <type>')
      .description('emit an event: starts handler runs and ends matching waits')
      .option('--key <subject>', "the event's subject")
      .option('--payload <json>', 'the event payload')
      .option('--id <id>', 'an id: the same id delivered twice starts one run per handler')
      .option('--json', 'print JSON'),
  ).action(async (type: string, options: Options) => {
    const text = str(options.payload);
    let payload: unknown = null;
    if (text !== undefined) {
      try {
        payload = JSON.parse(text) as unknown;
      } catch {
        throw new UsageError(`--payload is not valid JSON: ${text}`);
      }
    }
    const id = str(options.id);
    const clusterTarget = isCluster(options) ? await cluster(options) : null;
    const answer = await (clusterTarget?.target ?? (await target(options))).api<ResponseOf<'POST /events'>>('POST', '/events', {
      type,
      subject: str(options.key) ?? null,
      payload,
      ...(id ? { id } : {}),
    } satisfies RequestOf<'POST /events'>);
    if (options.json) return json(answer);
    // On a cluster, the runs by the names `kubectl get runs` shows (their ids are in --json).
    const started = clusterTarget ? await clusterTarget.runs.runNamesOf(clusterTarget.target, answer.runs) : answer.runs;
    out(`${answer.event.id}${started.length ? ` started ${started.join(', ')}` : ''}\n`);
  });

  const handler = program.command('handler').description('handlers: event type -> script');
  withServer(handler.command('set <name> <file>').description('run FILE for every event of a type').requiredOption('--on <type>', 'the event type')).action(
    async (name: string, file: string, options: Options) => {
      notOnCluster(options, 'a handler is a Handler resource: kubectl apply it (docs/crds.md)');
      await (await target(options)).api('PUT', `/handlers/${encodeURIComponent(name)}`, { eventType: String(options.on), ...(await source(file)) } satisfies RequestOf<'PUT /handlers/:name'>);
      out(`handler ${name}: ${file} on ${String(options.on)}\n`);
    },
  );
  withServer(handler.command('list').description('list handlers').option('--json', 'print JSON')).action(async (options: Options) => {
    const { handlers } = await (await target(options)).api<ResponseOf<'GET /handlers'>>('GET', '/handlers');
    if (options.json) return json(handlers);
    out(table(['NAME', 'ON', 'WORKFLOW'], handlers.map((h) => [h.name, h.eventType, h.workflow])));
  });
  withServer(handler.command('delete <name>').description('delete a handler')).action(async (name: string, options: Options) => {
    notOnCluster(options, 'a handler is a Handler resource: kubectl delete it');
    await (await target(options)).api('DELETE', `/handlers/${encodeURIComponent(name)}`);
    out(`deleted handler ${name}\n`);
  });

  const schedule = program.command('schedule').description('schedules: every/cron -> script');
  withServer(
    schedule
      .command('create <file>')
      .description('run FILE on a schedule; a tick while the previous run is still going is skipped')
      .requiredOption('--name <name>', 'the schedule name')
      .option('--every <duration>', 'run every DURATION (5m, 1h, ...)')
      .option('--cron <expr>', 'run on a cron expression'),
  ).action(async (file: string, options: Options) => {
    const every = str(options.every);
    const cron = str(options.cron);
    if ((every === undefined) === (cron === undefined)) throw new UsageError('give exactly one of --every and --cron');
    const body = { ...(await source(file)), ...(every ? { everyMs: parseDuration(every) } : { cron }) } satisfies RequestOf<'PUT /schedules/:name'>;
    notOnCluster(options, 'a schedule is a Schedule resource: kubectl apply it (docs/crds.md)');
    const { schedule: created } = await (await target(options)).api<ResponseOf<'PUT /schedules/:name'>>('PUT', `/schedules/${encodeURIComponent(String(options.name))}`, body);
    out(`schedule ${created.name}: next run at ${created.nextAt}\n`);
  });
  // On a cluster too (schedules/trigger through the aggregated API), as the Schedules page's Trigger now.
  withServer(schedule.command('trigger <name>').description('start a run of a schedule now; its next tick stays where it was')).action(async (name: string, options: Options) => {
    const { run } = await (await target(options)).api<ResponseOf<'POST /schedules/:name/trigger'>>('POST', `/schedules/${encodeURIComponent(name)}/trigger`);
    out(`${run}\n`);
  });
  for (const [verb, description, patch] of [
    ['suspend', 'stop a schedule ticking until it is resumed (trigger still starts a run)', 'true'],
    ['resume', 'let a suspended schedule tick again, from now: the ticks it missed are not made up', 'false'],
  ] as const) {
    withServer(schedule.command(`${verb} <name>`).description(description)).action(async (name: string, options: Options) => {
      notOnCluster(options, `a Schedule's spec.suspend says whether it ticks: kubectl patch schedule ${name} --type merge -p '{"spec":{"suspend":${patch}}}'`);
      const { schedule: changed } = await (await target(options)).api<ResponseOf<'POST /schedules/:name/suspend'>>('POST', `/schedules/${encodeURIComponent(name)}/${verb}`);
      out(`schedule ${changed.name}: ${changed.nextAt === null ? `suspended since ${changed.suspendedAt ?? ''}` : `next run at ${changed.nextAt}`}\n`);
    });
  }
  withServer(schedule.command('list').description('list schedules').option('--json', 'print JSON')).action(async (options: Options) => {
    const { schedules } = await (await target(options)).api<ResponseOf<'GET /schedules'>>('GET', '/schedules');
    if (options.json) return json(schedules);
    out(table(['NAME', 'EVERY', 'NEXT', 'SKIPPED', 'WORKFLOW'], schedules.map((s) => [s.name, s.cron ?? formatDuration(s.everyMs ?? 0), s.nextAt ?? 'suspended', String(s.skipped), s.workflow])));
  });
  withServer(schedule.command('delete <name>').description('delete a schedule')).action(async (name: string, options: Options) => {
    notOnCluster(options, 'a schedule is a Schedule resource: kubectl delete it');
    await (await target(options)).api('DELETE', `/schedules/${encodeURIComponent(name)}`);
    out(`deleted schedule ${name}\n`);
  });
}

/** The call a pass is in: the last journal position reached but not yet answered (a step running, say). */
function inProgress(journal: JournalEntry[]): string | null {
  const answered = new Set(journal.filter((entry) => entry.kind === 'result').map((entry) => entry.position));
  const open = journal.filter((entry) => entry.kind === 'call' && !answered.has(entry.position)).at(-1);
  return open ? `${open.verb === 'step_fn' ? 'step_fn' : open.verb} ${open.name} (call ${open.position + 1})` : null;
}

/**
 * `spool runs --watch`: as `kubectl get -w`, a line for each run whose status, awaiting or passes
 * changed (or that is new), until interrupted.
 */
async function watchRuns(seen: string[][], list: () => Promise<string[][]>, headers: string[]): Promise<never> {
  const state = (row: string[]): string => [row[1], row[2], row[3]].join('\0');
  const last = new Map(seen.map((row) => [row[0] ?? '', state(row)]));
  for (;;) {
    await delay(1000);
    const changed = (await list()).filter((row) => last.get(row[0] ?? '') !== state(row));
    for (const row of changed) last.set(row[0] ?? '', state(row));
    if (changed.length > 0) out(`${table(headers, changed).split('\n').slice(1).join('\n')}`);
  }
}
