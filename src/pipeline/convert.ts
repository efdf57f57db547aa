import { parseDuration } from '../common/duration.js';
import { UsageError } from '../common/errors.js';
import {
  DEFAULT_CONCURRENCY_POLICY,
  DEFAULT_RETRY_BACKOFF_MS,
  DEFAULT_THROTTLE_BURST,
  DEFAULT_THROTTLE_POLICY,
} from './defaults.js';
import { PipelineProblem, type DocumentPath } from './problem.js';
import type { RawConcurrency, RawFanOut, RawFormField, RawJob, RawPipeline, RawStep, RawThrottle } from './raw.js';
import type { Approval, Approvers, Concurrency, FanOut, FormField, Job, Pipeline, Retry, Step, ThrottleSpec } from './types.js';

/**
 * Turns a schema-valid document into a Pipeline: durations to milliseconds, shorthands expanded
 * (depends_on: x, retry: 2, rate: 10/1m), left-out keys given their defaults, so nothing
 * downstream has to know the document's spelling. Refuses the few things the schema lets through:
 * zero periods and two steps with one name.
 */
export function toPipeline(raw: RawPipeline): Pipeline {
  return {
    name: raw.name,
    concurrency: raw.concurrency ? toConcurrency(raw.concurrency) : null,
    throttle: raw.throttle ? toThrottle(raw.throttle, raw.name) : null,
    jobs: Object.entries(raw.jobs).map(([name, job]) => toJob(name, job)),
    outputs: raw.outputs ?? {},
  };
}

function toJob(name: string, raw: RawJob): Job {
  const path = ['jobs', name];
  return {
    name,
    dependsOn:
      raw.depends_on === undefined ? [] : typeof raw.depends_on === 'string' ? [raw.depends_on] : raw.depends_on,
    if: raw.if ?? null,
    steps: raw.steps ? toSteps(raw.steps, [...path, 'steps']) : null,
    script: raw.script ?? null,
    approval: raw.approval ? toApproval(raw.approval, [...path, 'approval']) : null,
    fanOut: raw.fan_out ? toFanOut(raw.fan_out, [...path, 'fan_out']) : null,
    retry: raw.retry === undefined ? null : toRetry(raw.retry, [...path, 'retry']),
    concurrency: raw.concurrency ? toConcurrency(raw.concurrency) : null,
  };
}

function toSteps(raw: RawStep[], path: DocumentPath): Step[] {
  const seen = new Set<string>();
  raw.forEach((step, i) => {
    // Step names label the run page and the journal; two alike could not be told apart.
    if (seen.has(step.name))
      throw new PipelineProblem(`two steps are named '${step.name}'; step names must differ within a job`, [
        ...path,
        i,
        'name',
      ]);
    seen.add(step.name);
  });
  return raw.map((step) => ({ name: step.name, run: step.run }));
}

/** The outputs every gate sets itself; a form field of the same name would be overwritten. */
export const GATE_OUTPUTS = ['approved', 'timed_out', 'answered_by', 'approvals'];

function toApproval(raw: NonNullable<RawJob['approval']>, path: DocumentPath): Approval {
  return {
    prompt: raw.prompt,
    timeout: raw.timeout === undefined ? null : raw.timeout.includes('${{') ? raw.timeout : durationText(raw.timeout, [...path, 'timeout']),
    form: Object.entries(raw.form ?? {}).map(([name, field]) => toFormField(name, field, [...path, 'form', name])),
    notify: raw.notify ?? null,
    approvers: raw.approvers ? toApprovers(raw.approvers, [...path, 'approvers']) : null,
  };
}

/** The group prefix in `approvers.from`: `group:release-managers`. */
export const GROUP_PREFIX = 'group:';

/** A gate's approvers, checked for what the schema cannot say (a pipeline's job, a graph's approval node). */
export function toApprovers(raw: NonNullable<NonNullable<RawJob['approval']>['approvers']>, path: DocumentPath): Approvers {
  const people = raw.from.filter((name) => !name.startsWith(GROUP_PREFIX));
  // A group may hold any number of people; names alone must be enough for the count.
  if (people.length === raw.from.length && raw.count > people.length)
    throw new PipelineProblem(`'count' is ${raw.count} but 'from' names only ${people.length} ${people.length === 1 ? 'person' : 'people'} and no group, so the gate could never open`, [...path, 'count']);
  const empty = raw.from.find((name) => name === GROUP_PREFIX);
  if (empty !== undefined) throw new PipelineProblem(`'${GROUP_PREFIX}' in 'from' names no group; write ${GROUP_PREFIX}<name>`, [...path, 'from']);
  return { count: raw.count, from: raw.from };
}

function toFormField(name: string, raw: RawFormField, path: DocumentPath): FormField {
  if (GATE_OUTPUTS.includes(name))
    throw new PipelineProblem(`form field '${name}' would hide the gate's own output of that name; pick another name`, path);
  return toField(name, raw, path);
}

/** A typed field of a form (an approval's, or a graph's declared inputs): its default fits its type, options and bounds. */
export function toField(name: string, raw: RawFormField, path: DocumentPath): FormField {
  if (raw.options && raw.type !== 'string')
    throw new PipelineProblem(`'options' belongs to a field of type string, not ${raw.type}`, [...path, 'options']);
  const fallback = raw.default ?? null;
  if (fallback !== null && typeof fallback !== raw.type)
    throw new PipelineProblem(`the default of form field '${name}' must be a ${raw.type}, not ${JSON.stringify(fallback)}`, [...path, 'default']);
  if (fallback !== null && raw.options && !raw.options.includes(String(fallback)))
    throw new PipelineProblem(`the default of form field '${name}' is not one of its options (${raw.options.join(', ')})`, [...path, 'default']);
  for (const bound of ['min', 'max'] as const)
    if (raw[bound] !== undefined && raw.type !== 'number') throw new PipelineProblem(`'${bound}' belongs to a field of type number, not ${raw.type}`, [...path, bound]);
  const min = raw.min ?? null;
  const max = raw.max ?? null;
  if (min !== null && max !== null && min > max) throw new PipelineProblem(`the min of form field '${name}' (${min}) is above its max (${max})`, [...path, 'min']);
  if (typeof fallback === 'number' && ((min !== null && fallback < min) || (max !== null && fallback > max)))
    throw new PipelineProblem(`the default of form field '${name}' (${fallback}) is outside its bounds (${min ?? '…'} to ${max ?? '…'})`, [...path, 'default']);
  return { name, type: raw.type, label: raw.label ?? name, required: raw.required ?? false, default: fallback, options: raw.options ?? null, min, max };
}

function toFanOut(raw: RawFanOut, path: DocumentPath): FanOut {
  return {
    items: raw.items,
    maxParallel: raw.max_parallel ?? null,
    rate: raw.rate === undefined ? null : toRate(raw.rate, [...path, 'rate']),
    steps: raw.steps ? toSteps(raw.steps, [...path, 'steps']) : null,
    workflow: raw.workflow ?? null,
  };
}

/** `10/1m` or `{limit: 10, period: 1m}`; the schema has checked the string's shape. */
export function toRate(raw: NonNullable<RawFanOut['rate']>, path: DocumentPath): { limit: number; periodMs: number } {
  if (typeof raw !== 'string') return { limit: raw.limit, periodMs: positiveDuration(raw.period, [...path, 'period']) };
  const slash = raw.indexOf('/');
  return { limit: Number(raw.slice(0, slash).trim()), periodMs: positiveDuration(raw.slice(slash + 1).trim(), path) };
}

/** `retry: N` is N more attempts after the first; the object form counts the first, like --attempts. */
export function toRetry(raw: NonNullable<RawJob['retry']>, path: DocumentPath): Retry {
  if (typeof raw === 'number') return { attempts: raw + 1, backoffMs: DEFAULT_RETRY_BACKOFF_MS };
  return {
    attempts: raw.attempts,
    backoffMs: raw.backoff === undefined ? DEFAULT_RETRY_BACKOFF_MS : durationAt(raw.backoff, [...path, 'backoff']),
  };
}

function toConcurrency(raw: RawConcurrency): Concurrency {
  return { group: raw.group, policy: raw.policy ?? DEFAULT_CONCURRENCY_POLICY };
}

function toThrottle(raw: RawThrottle, pipelineName: string): ThrottleSpec {
  return {
    limit: raw.limit,
    periodMs: positiveDuration(raw.period, ['throttle', 'period']),
    // Without a key every run of the pipeline shares one budget.
    key: raw.key ?? pipelineName,
    burst: raw.burst ?? DEFAULT_THROTTLE_BURST,
    policy: raw.policy ?? DEFAULT_THROTTLE_POLICY,
  };
}

/** A literal duration, checked now and kept as written (an expression's value is checked when read). */
function durationText(text: string, path: DocumentPath): string {
  positiveDuration(text, path);
  return text;
}

/** A rate over 0s or a gate that times out at once is a slip, not a setting. */
export function positiveDuration(text: string, path: DocumentPath): number {
  const ms = durationAt(text, path);
  if (ms <= 0)
    throw new PipelineProblem(`'${String(path.at(-1))}' must be a duration longer than 0, got '${text}'`, path);
  return ms;
}

/** The schema checks a duration's shape, not its size: one over 100 years is refused here, pointed at. */
function durationAt(text: string, path: DocumentPath): number {
  try {
    return parseDuration(text);
  } catch (error) {
    if (error instanceof UsageError) throw new PipelineProblem(error.message, path);
    throw error;
  }
}
