import type { Approval, Approvers, ChatNotify, ExpressionScope, FormField, Job, Step } from './types.js';
import { interpolate } from './expressions.js';

/** Quotes a value for bash, whatever it holds. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A job's lease, taken first and held until the job's run ends (`concurrency:` on a job). */
function lockLine(job: Job, scope: ExpressionScope): string {
  return job.concurrency ? `spool lock ${shellQuote(interpolate(job.concurrency.group, scope))}\n` : '';
}

/**
 * A `steps:` job as one bash script: its steps run in order as one atomic unit (no durable
 * boundaries between them), so a retry runs them all again.
 */
export function stepsScript(job: Job, steps: Step[], scope: ExpressionScope): string {
  const item = scope.item === undefined ? '' : `export ITEM=${shellQuote(JSON.stringify(scope.item))}\n`;
  const body = steps.map((step) => `# step: ${step.name.replaceAll('\n', ' ')}\n${interpolate(step.run, scope)}\n`).join('');
  return `${lockLine(job, scope)}${item}${body}`;
}

export function scriptJob(job: Job, script: string, scope: ExpressionScope): string {
  return `${lockLine(job, scope)}${script}\n`;
}

/**
 * What a gate's run is given as its input: what the run page and the approvals API show a person
 * (the prompt as it reads with this run's values, the form to fill in, how long the gate waits).
 */
export interface GateInput {
  approval: { job: string; prompt: string; timeoutMs: number | null; form: FormField[]; notify?: ChatNotify; approvers?: Approvers };
}

export function gateInput(job: Pick<Job, 'name'>, approval: Approval, scope: ExpressionScope, timeoutMs: number | null): GateInput {
  const { form, notify, approvers } = approval;
  return { approval: { job: job.name, prompt: interpolate(approval.prompt, scope), timeoutMs, form, ...(notify ? { notify } : {}), ...(approvers ? { approvers } : {}) } };
}

/**
 * An approval gate as a run that waits for the `approve` signal (rejecting cancels the whole
 * pipeline run instead), and records the outcome as the job's outputs. The signal's payload is the
 * answer (`{by, values}`, src/server/approvals.ts); the coordinator spreads it into the job's
 * outputs (`answered_by` and one output per form field).
 */
export function approvalScript(pipelineRun: string, job: Pick<Job, 'name'>, approval: Approval, scope: ExpressionScope, timeoutMs: number | null): string {
  const timeout = timeoutMs === null ? '' : ` --timeout ${timeoutMs}ms`;
  return [
    // A step, so the prompt shows once in the log however many passes the gate takes.
    `spool step prompt -- echo ${shellQuote(`waiting for approval: ${interpolate(approval.prompt, scope)} (spool approve ${pipelineRun} ${job.name}, or spool reject)`)}`,
    'rc=0',
    `answer="$(spool wait signal approve${timeout})" || rc=$?`,
    'if [ "$rc" -eq 0 ]; then',
    '  spool output set approved true; spool output set timed_out false',
    '  spool output set answer "$answer"',
    `  echo ${shellQuote(`${job.name}: approved`)}`,
    'elif [ "$rc" -eq 124 ]; then',
    '  spool output set approved false; spool output set timed_out true',
    `  echo ${shellQuote(`${job.name}: no answer in time`)}`,
    'else',
    '  exit "$rc"',
    'fi',
    '',
  ].join('\n');
}

/**
 * A gate's outputs as the jobs after it read them: the answer's form values and who answered,
 * beside `approved` and `timed_out`. An answer that is not an object (an approve signal sent by
 * hand, or by a server from before forms) adds nothing.
 */
export function gateOutputs(outputs: Record<string, unknown>): Record<string, unknown> {
  const { answer, ...rest } = outputs;
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return rest;
  const { by, values, approvals } = answer as { by?: unknown; values?: unknown; approvals?: unknown };
  const fields = typeof values === 'object' && values !== null && !Array.isArray(values) ? values : {};
  // A gate with approvers: every approval that opened it ({by, at, values}), in order.
  return { ...fields, ...(typeof by === 'string' ? { answered_by: by } : {}), ...(Array.isArray(approvals) ? { approvals } : {}), ...rest };
}
