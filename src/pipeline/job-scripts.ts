import type { Approval, ExpressionScope, Job, Step } from './types.js';
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
 * An approval gate as a run that waits for the `approve` signal (rejecting cancels the whole
 * pipeline run instead), and records the outcome as the job's outputs.
 */
export function approvalScript(pipelineRun: string, job: Job, approval: Approval, scope: ExpressionScope): string {
  const timeout = approval.timeoutMs === null ? '' : ` --timeout ${approval.timeoutMs}ms`;
  return [
    // A step, so the prompt shows once in the log however many passes the gate takes.
    `spool step prompt -- echo ${shellQuote(`waiting for approval: ${interpolate(approval.prompt, scope)} (spool approve ${pipelineRun} ${job.name}, or spool reject)`)}`,
    'rc=0',
    `spool wait signal approve${timeout} > /dev/null || rc=$?`,
    'if [ "$rc" -eq 0 ]; then',
    '  spool output set approved true; spool output set timed_out false',
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
