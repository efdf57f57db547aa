import { cancelRun } from '../engine/cancel.js';
import { signalRun } from '../engine/wake.js';
import { runsInProcess } from '../common/workflow-file.js';
import type { GateInput } from '../pipeline/job-scripts.js';
import { parsePipeline } from '../pipeline/parse.js';
import { gateTimeoutMs } from '../pipeline/settings.js';
import type { Approvers, FormField } from '../pipeline/types.js';
import { GROUP_PREFIX } from '../pipeline/convert.js';
import type { Caller } from './caller.js';
export { approvalCount } from '../api/approval-count.js';
import { TERMINAL_STATUSES, type GateAnswerRecord, type RunRecord } from '../store/types.js';
import type { Gate } from '../api/responses.js';
import type { ServerContext } from './context.js';
import { HttpError, badRequest, notFound } from './http-error.js';

/** A form value as the gate's job reads it: typed as its field declares. */
export type FormValue = string | number | boolean;

/** Who answered a gate, how and when; the payload of the `approve` signal a gate waits for. */
export interface GateAnswer {
  by: string | null;
  at: string;
  values: Record<string, FormValue>;
  /** A gate with approvers: every approval that opened it, in the order they came, this one last. */
  approvals?: { by: string | null; at: string; values: Record<string, unknown> | null }[];
}

export type { Gate } from '../api/responses.js';

/** What an answer came through: the CLI, the run page, the API itself, or a chat service. */
export type AnswerVia = 'cli' | 'page' | 'api' | 'slack' | 'mattermost';

export type Decision = 'approve' | 'reject';

/** The job of a pipeline run's child, from its workflow (`refund.yaml#ask`), or null. */
function jobOf(parent: RunRecord, child: RunRecord): string | null {
  const prefix = `${parent.workflow}#`;
  return child.workflow.startsWith(prefix) && !child.workflow.endsWith(']') ? child.workflow.slice(prefix.length) : null;
}

function gateInputOf(run: RunRecord): GateInput['approval'] | null {
  const input = run.input as Partial<GateInput> | null;
  return input && typeof input === 'object' && input.approval && typeof input.approval.prompt === 'string' ? input.approval : null;
}

function answerOf(outputs: Record<string, string>): GateAnswer | null {
  try {
    const answer = JSON.parse(outputs.answer ?? 'null') as Partial<GateAnswer> | null;
    if (!answer || typeof answer !== 'object') return null;
    return { by: typeof answer.by === 'string' ? answer.by : null, at: String(answer.at ?? ''), values: answer.values ?? {} };
  } catch {
    return null;
  }
}

/** Rejecting cancels the pipeline run with this reason; the gate's page reads who rejected from it. */
const REJECTED = /^rejected at (\S+)(?: by (.+))?$/;

/** The approval gates a pipeline run has started, in the order it started them (none for a script run). */
export async function listGates(ctx: ServerContext, run: RunRecord): Promise<Gate[]> {
  if (!runsInProcess(run)) return [];
  // The form and prompt are in each gate's input; runs started before gates had one fall back to the document.
  let document: Map<string, { prompt: string; timeoutMs: number | null; form: FormField[]; approvers?: Approvers | null }> | null = null;
  const declared = (job: string) => {
    try {
      document ??= new Map(
        parsePipeline(run.script, run.workflow).jobs.flatMap((j) =>
          // Such runs predate computed timeouts: a literal one needs no values.
          j.approval ? [[j.name, { ...j.approval, timeoutMs: gateTimeoutMs(j.name, j.approval, { input: run.input, steps: {} }) }] as const] : [],
        ),
      );
    } catch {
      document = new Map();
    }
    return document.get(job) ?? null;
  };
  const children = (await ctx.store.listRuns({ parentId: run.id, limit: 10_000 })).reverse();
  const gates: Gate[] = [];
  for (const child of children) {
    const job = jobOf(run, child);
    if (job === null) continue;
    const spec = gateInputOf(child) ?? declared(job);
    if (!spec) continue;
    const answer = answerOf(child.outputs);
    const rejected = REJECTED.exec(child.error ?? '');
    const state: Gate['state'] =
      child.status === 'succeeded'
        ? child.outputs.timed_out === 'true' ? 'timed_out' : 'approved'
        : child.status === 'cancelled'
          ? rejected?.[1] === job ? 'rejected' : 'cancelled'
          : child.status === 'failed' ? 'failed' : 'waiting';
    const deadline = state === 'waiting' && child.wait?.kind === 'signal' ? (child.wait.deadline ?? null) : null;
    const answers = (await ctx.store.gateAnswers(child.id)).map((each) => ({ ...each, at: each.at.toISOString() }));
    gates.push({
      job,
      runId: child.id,
      state,
      prompt: spec.prompt,
      // Gates started before forms had bounds have none.
      form: spec.form.map((field) => ({ ...field, min: field.min ?? null, max: field.max ?? null })),
      timeoutMs: spec.timeoutMs,
      since: child.createdAt.toISOString(),
      deadline,
      answeredBy: state === 'rejected' ? (rejected?.[2] ?? null) : (answer?.by ?? null),
      answeredAt: state === 'rejected' ? (child.finishedAt?.toISOString() ?? null) : (answer?.at || null),
      values: answer?.values ?? null,
      answers,
      approvers: spec.approvers ?? null,
    });
  }
  return gates;
}

/** The form's values as the gate's job will read them; a person is told which field is wrong and why. */
export function formValues(form: FormField[], raw: unknown): Record<string, FormValue> {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw badRequest(`'values' must be an object of form fields`);
  const given = (raw ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(given).find((name) => !form.some((field) => field.name === name));
  if (unknown !== undefined) {
    const known = form.map((field) => field.name).join(', ');
    throw badRequest(form.length ? `the form has no field '${unknown}' (its fields: ${known})` : `this gate has no form, so it takes no values ('${unknown}')`);
  }
  const values: Record<string, FormValue> = {};
  for (const field of form) {
    const value = typed(field, given[field.name]);
    if (value === null) {
      if (field.required) throw badRequest(`'${field.label}' (${field.name}) is required`);
      if (field.default !== null) values[field.name] = field.default;
      continue;
    }
    if (field.options && !field.options.includes(String(value))) throw badRequest(`'${field.label}' must be one of ${field.options.join(', ')}, not '${String(value)}'`);
    values[field.name] = value;
  }
  return values;
}

/** A value as its field's type, null when left empty; strings from a form or a terminal are read as their type. */
function typed(field: FormField, value: unknown): FormValue | null {
  if (value === undefined || value === null || value === '') return null;
  switch (field.type) {
    case 'number': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
      if (!Number.isFinite(number)) throw badRequest(`'${field.label}' must be a number, not '${String(value)}'`);
      // Gates started before forms had bounds have none (undefined).
      if (typeof field.min === 'number' && number < field.min) throw badRequest(`'${field.label}' must be at least ${field.min}, not ${number}`);
      if (typeof field.max === 'number' && number > field.max) throw badRequest(`'${field.label}' must be at most ${field.max}, not ${number}`);
      return number;
    }
    case 'boolean':
      if (value === true || value === 'true') return true;
      if (value === false || value === 'false') return false;
      throw badRequest(`'${field.label}' must be true or false, not '${String(value)}'`);
    default:
      if (typeof value !== 'string') throw badRequest(`'${field.label}' must be text, not ${JSON.stringify(value)}`);
      return value;
  }
}

/** A second answer to a gate: 409, saying who answered first, how, through what and when. */
export function alreadyAnswered(job: string, first: Pick<GateAnswerRecord, 'decision' | 'by' | 'via'> & { at: Date | string }): HttpError {
  const at = typeof first.at === 'string' ? first.at : first.at.toISOString();
  return new HttpError(
    409,
    'already_answered',
    `the approval '${job}' was already ${first.decision === 'approve' ? 'approved' : 'rejected'} by ${first.by ?? 'someone'} (${first.via}) at ${at}; the first answer is final`,
  );
}

/** What an answer did: decided the gate, or was counted towards its approvers' count. */
export interface Answered {
  gate: Gate;
  values: Record<string, FormValue>;
  /** A gate with approvers: the approvals so far and how many open it; null for a single-approver gate. */
  approvals: { counted: number; needed: number; by: (string | null)[] } | null;
}

/**
 * Why this person may not answer a gate with approvers (a 403 in one line), or null when they may:
 * by name or by a group their identity carries, and not to approve a run they submitted.
 */
export function refusal(approvers: Approvers, job: string, run: RunRecord, caller: Caller, decision: Decision): HttpError | null {
  const { user, groups } = caller;
  const asked = approvers.from.join(', ');
  if (user === null) return new HttpError(403, 'not_an_approver', `the approval '${job}' asks ${asked}, and this server does not know who you are`);
  if (decision === 'approve' && run.submittedBy !== null && user === run.submittedBy)
    return new HttpError(403, 'submitter', `${user} submitted run ${run.id} and may not approve its approval '${job}'; it asks ${approvers.count} of ${asked}`);
  const named = approvers.from.some((each) => (each.startsWith(GROUP_PREFIX) ? groups.includes(each.slice(GROUP_PREFIX.length)) : each === user));
  return named ? null : new HttpError(403, 'not_an_approver', `${user} may not answer the approval '${job}': it asks ${asked}`);
}

/**
 * Answers the gate of `job` in the run: approve sends the gate its `approve` signal with the
 * answer (who, when, the form's values), reject cancels the whole run. The first answer is final,
 * decided in one statement in the store (issue 28, bug 5): a later one, however soon, is kept and
 * refused with 409 naming the first. A gate with approvers counts approvals from distinct people
 * (each person answers once) and opens at the count-th; the first rejection still decides it.
 * 404 when the run has no such gate.
 */
export async function answerGate(
  ctx: ServerContext,
  run: RunRecord,
  job: string,
  decision: Decision,
  rawValues: unknown,
  caller: Caller,
  via: AnswerVia = 'api',
): Promise<Answered> {
  const by = caller.user;
  const gates = (await listGates(ctx, run)).filter((candidate) => candidate.job === job);
  const gate = gates.find((candidate) => candidate.state === 'waiting') ?? gates.at(-1);
  if (!gate) throw notFound(`an approval gate '${job}' in run ${run.id}`);
  const gateRun = await ctx.store.getRun(gate.runId);
  if (gate.state !== 'waiting' || !gateRun || TERMINAL_STATUSES.includes(gateRun.status)) {
    const first = gate.answers.find((each) => each.final);
    if (first) {
      // Kept as it came (its form unchecked: it changes nothing), and told whose answer stands.
      await ctx.store.answerGate(gate.runId, { decision, by, via, values: null });
      throw alreadyAnswered(job, first);
    }
    throw new HttpError(409, 'not_waiting', `the approval '${job}' is no longer waiting: it ${gate.state.replace('_', ' ')}`);
  }
  const { approvers } = gate;
  const refused = approvers && refusal(approvers, job, run, caller, decision);
  if (refused) throw refused;
  const values = decision === 'approve' ? formValues(gate.form, rawValues) : {};
  const claim = await ctx.store.answerGate(gate.runId, { decision, by, via, values }, approvers?.count ?? 1);
  const needed = approvers?.count ?? 1;
  const approvals = approvers ? { counted: claim.approvals.length, needed, by: claim.approvals.map((each) => each.by) } : null;
  if (claim.duplicate) {
    const earlier = claim.duplicate;
    throw new HttpError(
      409,
      'answered_twice',
      `${by ?? 'someone'} already ${earlier.decision === 'approve' ? 'approved' : 'rejected'} the approval '${job}' (${earlier.via}) at ${earlier.at.toISOString()}; each person answers once (${claim.approvals.length} of ${needed} approvals)`,
    );
  }
  if (!claim.won) {
    if (claim.first) throw alreadyAnswered(job, claim.first);
    // Counted: the gate waits for the rest.
    return { gate, values, approvals };
  }
  const now = ctx.now();
  if (decision === 'reject') {
    const cancelled = await cancelRun(ctx.store, run.id, now, `rejected at ${job}${by ? ` by ${by}` : ''}`);
    for (const id of cancelled) ctx.abortPass(id);
    ctx.poke();
    return { gate, values: {}, approvals };
  }
  const answer: GateAnswer = {
    by,
    at: now.toISOString(),
    values,
    ...(approvers ? { approvals: claim.approvals.map((each) => ({ by: each.by, at: each.at.toISOString(), values: each.values })) } : {}),
  };
  await signalRun(ctx.store, gate.runId, 'approve', JSON.stringify(answer), now);
  ctx.poke();
  return { gate, values, approvals };
}
