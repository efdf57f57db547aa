import { writeSync } from 'node:fs';
import { UsageError } from '../common/errors.js';
import { readTextFile } from '../common/text-file.js';
import { resolve } from 'node:path';
import { interpreterOf } from '../common/workflow-file.js';
import type { PassOutcome } from '../passes/local-pass.js';
import { Pass, type PassHost } from '../engine/pass.js';
import type { Answer, Request } from '../engine/protocol.js';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import { MAX_FAN_OUT_ITEMS } from './defaults.js';
import { evaluate, evaluateCondition, interpolate, parseExpression } from './expressions.js';
import { approvalScript, gateInput, gateOutputs, scriptJob, stepsScript } from './job-scripts.js';
import { parsePipeline } from './parse.js';
import { pinnedBody } from './pinned-bodies.js';
import { gateTimeoutMs } from './settings.js';
import type { ExpressionScope, Job } from './types.js';

type JobStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

interface FanState {
  items: unknown[];
  next: number;
  active: number;
  results: unknown[];
  failed: string | null;
}

interface JobState {
  status: JobStatus;
  attempt: number;
  /** Skipped because a job above it failed: the jobs below it are not followed either. */
  afterFailure?: boolean;
  fan?: FanState;
}

/** A child run the coordinator started: one attempt of a job, or one item of a fan_out. */
interface Started {
  job: Job;
  item?: number;
}

interface Ended {
  runId: string;
  status: string;
  outputs: Record<string, string>;
  error: string | null;
  log: string;
}

class Suspended extends Error {}

/** Output values are strings; JSON ones (true, 3, {...}) become values so expressions can test them. */
function typed(outputs: Record<string, string>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(outputs)) {
    try {
      values[key] = JSON.parse(value) as unknown;
    } catch {
      values[key] = value;
    }
  }
  return values;
}

/**
 * One pass of a pipeline run, in-process: it replays the job graph from the journal like a script
 * replays its calls. Each job attempt (and each fan_out item) is a child run started with a durable
 * spawn; the coordinator waits for whichever ends first, holding no process while they run.
 */
export class Coordinator {
  private readonly scope: ExpressionScope;
  private readonly states = new Map<string, JobState>();
  private readonly started = new Map<string, Started>();

  constructor(
    private readonly pass: Pass,
    private readonly run: RunRecord,
    private readonly jobs: Job[],
    private readonly print: (text: string) => void,
    private readonly outputs: Record<string, string> = {},
  ) {
    this.scope = { input: run.input, steps: {} };
    for (const job of jobs) this.states.set(job.name, { status: 'pending', attempt: 0 });
  }

  private async call(request: Request): Promise<Extract<Answer, { status: 'ok' }>> {
    const answer = await this.pass.handle(request);
    if (answer.status === 'suspended') throw new Suspended();
    if (answer.status !== 'ok') throw new Error(answer.status === 'error' ? answer.message : `unexpected ${answer.status}`);
    return answer;
  }

  private say(line: string, replayed: boolean): void {
    if (!replayed) this.print(`  ${line}\n`);
  }

  async coordinate(group: string | null): Promise<PassOutcome> {
    if (group !== null) await this.call({ verb: 'lock', group, command: false });
    for (;;) {
      await this.startReady();
      if (this.started.size === 0) break;
      const answer = await this.call({ verb: 'wait.children', runIds: [...this.started.keys()], awaiting: this.awaiting() });
      await this.ended(JSON.parse(answer.stdout ?? '{}') as Ended, answer.replayed === true);
    }
    await this.setOutputs();
    const failed = this.jobs.filter((job) => this.states.get(job.name)?.status === 'failed');
    if (failed.length === 0) return { kind: 'succeeded' };
    return { kind: 'failed', message: `job ${failed.map((job) => job.name).join(', ')} failed` };
  }

  /** The pipeline's `outputs`, each a durable `output.set` of the run, read once every job has ended. */
  private async setOutputs(): Promise<void> {
    for (const [key, text] of Object.entries(this.outputs)) await this.call({ verb: 'output.set', key, value: interpolate(text, this.scope) });
  }

  /** What the run shows it waits for: `approval <job>` for gates, else the jobs under way. */
  private awaiting(): string {
    const jobs = [...new Set([...this.started.values()].map((started) => started.job))];
    const gates = jobs.filter((job) => job.approval);
    if (gates.length > 0) return gates.map((job) => `approval ${job.name}`).join(', ');
    return `jobs ${jobs.map((job) => job.name).join(', ')}`;
  }

  /** Decides every job whose dependencies have all finished: skip it, or start it. */
  private async startReady(): Promise<void> {
    for (let progress = true; progress; ) {
      progress = false;
      for (const job of this.jobs) {
        const state = this.states.get(job.name);
        if (!state) continue;
        if (state.status === 'running' && state.fan) await this.startItems(job, state.fan);
        if (state.status !== 'pending') continue;
        const deps = job.dependsOn.map((name): JobState => this.states.get(name) ?? { status: 'pending', attempt: 0 });
        if (deps.some(({ status }) => status === 'pending' || status === 'running')) continue;
        progress = true;
        if (deps.some((dep) => dep.status === 'failed' || dep.afterFailure)) this.skip(job, 'a job it depends on failed', true);
        else if (job.if !== null && !evaluateCondition(job.if, this.scope)) this.skip(job, 'its condition is false');
        else await this.start(job, state);
      }
    }
  }

  private skip(job: Job, why: string, afterFailure = false): void {
    this.states.set(job.name, { status: 'skipped', attempt: 0, afterFailure });
    this.scope.steps[job.name] = { output: {}, status: 'skipped' };
    this.say(`${job.name}: skipped, ${why}`, this.pass.replaying);
  }

  private async spawn(job: Job, script: string, interpreter: string, input: unknown, suffix = '', body?: string): Promise<void> {
    const request = { verb: 'spawn' as const, workflow: `${this.run.workflow}#${job.name}${suffix}`, script, interpreter, input };
    const answer = await this.call(body === undefined ? request : { ...request, body });
    const runId = (answer.stdout ?? '').trim();
    this.started.set(runId, { job, ...(suffix ? { item: Number(suffix.slice(1, -1)) } : {}) });
    this.say(`${job.name}${suffix}: started ${runId}`, answer.replayed === true);
  }

  private async start(job: Job, state: JobState): Promise<void> {
    state.status = 'running';
    state.attempt += 1;
    if (job.approval) {
      let timeoutMs: number | null;
      try {
        timeoutMs = gateTimeoutMs(job.name, job.approval, this.scope);
      } catch (error) {
        if (error instanceof UsageError) return this.finish(job, 'failed', {}, error.message, this.pass.replaying);
        throw error;
      }
      const script = approvalScript(this.run.id, job, job.approval, this.scope, timeoutMs);
      return this.spawn(job, script, 'bash -eu', gateInput(job, job.approval, this.scope, timeoutMs));
    }
    if (job.steps) return this.spawn(job, stepsScript(job, job.steps, this.scope), 'bash -eu', this.run.input);
    if (job.script !== null) return this.spawn(job, scriptJob(job, job.script, this.scope), 'bash -eu', this.run.input);
    if (job.fanOut) {
      const items = Array.isArray(job.fanOut.items) ? job.fanOut.items : evaluate(parseExpression(job.fanOut.items), this.scope);
      if (!Array.isArray(items) || items.length > MAX_FAN_OUT_ITEMS) {
        const what = Array.isArray(items) ? `${items.length} items` : 'not a list';
        return this.finish(job, 'failed', {}, `fan_out takes a list of at most ${MAX_FAN_OUT_ITEMS} items, got ${what}`, this.pass.replaying);
      }
      state.fan = { items, next: 0, active: 0, results: [], failed: null };
      if (items.length === 0) return this.finish(job, 'succeeded', { results: [] }, null, this.pass.replaying);
      return this.startItems(job, state.fan);
    }
  }

  /** Starts fan_out items up to max_parallel, no faster than the rate. */
  private async startItems(job: Job, fan: FanState): Promise<void> {
    const spec = job.fanOut;
    if (!spec) return;
    while (fan.failed === null && fan.next < fan.items.length && fan.active < (spec.maxParallel ?? MAX_FAN_OUT_ITEMS)) {
      const index = fan.next;
      if (index > 0 && spec.rate) await this.call({ verb: 'sleep', ms: Math.ceil(spec.rate.periodMs / spec.rate.limit) });
      fan.next += 1;
      fan.active += 1;
      const item = fan.items[index];
      if (spec.workflow) {
        const body = pinnedBody(this.run.runner, spec.workflow);
        if (body) {
          await this.spawn(job, body.script, body.interpreter, item, `[${index}]`, spec.workflow);
        } else if (this.pass.host.noWorkflowFiles) {
          fan.failed ??= `fan_out workflow: ${spec.workflow}: ${this.pass.host.noWorkflowFiles}`;
          fan.active -= 1;
          if (fan.active === 0) this.finish(job, 'failed', { results: fan.results }, fan.failed, this.pass.replaying);
          return;
        } else {
          const file = resolve(this.run.cwd ?? '.', spec.workflow);
          await this.spawn(job, readTextFile(file), interpreterOf(file), item, `[${index}]`);
        }
      } else {
        await this.spawn(job, stepsScript(job, spec.steps ?? [], { ...this.scope, item }), 'bash -eu', item, `[${index}]`);
      }
    }
  }

  private async ended(ended: Ended, replayed: boolean): Promise<void> {
    const started = this.started.get(ended.runId);
    if (!started) return;
    this.started.delete(ended.runId);
    if (!replayed && ended.log) this.print(ended.log);
    const { job } = started;
    const state = this.states.get(job.name);
    if (!state) return;
    if (state.fan && started.item !== undefined) return this.itemEnded(job, state.fan, started.item, ended, replayed);
    if (ended.status === 'succeeded') {
      const outputs = typed(ended.outputs);
      return this.finish(job, 'succeeded', job.approval ? gateOutputs(outputs) : outputs, null, replayed);
    }
    if (job.retry && state.attempt < job.retry.attempts) {
      this.say(`${job.name}: attempt ${state.attempt} ${ended.status}, retrying`, replayed);
      await this.call({ verb: 'sleep', ms: job.retry.backoffMs * 2 ** (state.attempt - 1) });
      return this.start(job, state);
    }
    this.finish(job, 'failed', typed(ended.outputs), ended.error, replayed);
  }

  private itemEnded(job: Job, fan: FanState, item: number, ended: Ended, replayed: boolean): void {
    fan.active -= 1;
    const outputs = typed(ended.outputs);
    fan.results[item] = 'result' in outputs ? outputs.result : ended.log.trim();
    if (ended.status !== 'succeeded') fan.failed ??= `item ${item} ${ended.status}`;
    if (fan.active > 0 || (fan.failed === null && fan.next < fan.items.length)) return;
    if (fan.failed !== null) this.finish(job, 'failed', { results: fan.results }, fan.failed, replayed);
    else this.finish(job, 'succeeded', { results: fan.results }, null, replayed);
  }

  private finish(job: Job, status: 'succeeded' | 'failed', output: Record<string, unknown>, error: string | null, replayed: boolean): void {
    this.states.set(job.name, { status, attempt: this.states.get(job.name)?.attempt ?? 1 });
    this.scope.steps[job.name] = { output, status };
    this.say(`${job.name}: ${status}${error ? ` (${error})` : ''}`, replayed);
  }
}

/** Runs one pass of a pipeline run; the pipeline-level concurrency group is its first durable call. */
export async function runPipelinePass(
  store: Store,
  run: RunRecord,
  host: PassHost,
  options: { output: 'inherit' | number; lenient?: boolean; pass?: Pass },
): Promise<PassOutcome> {
  const pipeline = parsePipeline(run.script, run.workflow);
  // A pass made by the caller: a replay's (engine/replay-pass.ts).
  const pass = options.pass ?? (await Pass.start(store, run, host, options.lenient));
  const fd = options.output === 'inherit' ? 1 : options.output;
  const coordinator = new Coordinator(pass, run, pipeline.jobs, (text) => void writeSync(fd, text), pipeline.outputs);
  const scope = { input: run.input, steps: {} };
  try {
    return await coordinator.coordinate(pipeline.concurrency ? interpolate(pipeline.concurrency.group, scope) : null);
  } catch (error) {
    if (error instanceof Suspended && pass.suspension) return { kind: 'suspended', suspension: pass.suspension };
    if (pass.failure) return { kind: 'failed', message: pass.failure };
    return { kind: 'failed', message: (error as Error).message };
  }
}
