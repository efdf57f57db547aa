import { ExpressionError } from './expression-error.js';
import { parseExpressionAt, type Expr } from './expression-parser.js';
import { paths } from './expressions.js';
import { ancestors } from './graph.js';
import { PipelineProblem, type DocumentPath } from './problem.js';
import { suggest } from './suggest.js';
import { scanTemplate, soleExpression, type TemplatePart } from './template-scan.js';
import type { Pipeline, Step } from './types.js';

/** A string in the document that may hold `${{ }}`, and what its expressions may read. */
interface Site {
  path: DocumentPath;
  text: string;
  /** One whole `${{ }}` (if:, fan_out.items) rather than text with expressions in it. */
  whole: boolean;
  /** The job whose ancestors' steps.<job> are readable; null where only input is (run admission). */
  job: string | null;
  /** The pipeline's outputs, read once every job has ended: any job's steps.<job> is readable. */
  afterAll?: boolean;
  /** Inside a fan_out's steps, where `item` is the current item. */
  item: boolean;
  /** Names the place in messages about what it cannot read. */
  label: string;
}

/**
 * Parses every expression in the pipeline and checks what it reads, so a typo in a job name is
 * refused on submit rather than read as null (and silently false) days later when the job runs.
 */
export function checkExpressions(pipeline: Pipeline): void {
  const upstream = ancestors(pipeline.jobs);
  const jobNames = pipeline.jobs.map((job) => job.name);
  for (const site of sites(pipeline)) {
    for (const { expr, part } of parseSite(site)) {
      for (const path of paths(expr)) checkPath(site, part, path, jobNames, upstream);
    }
  }
}

function sites(pipeline: Pipeline): Site[] {
  const found: Site[] = [];
  const admission = (path: DocumentPath, text: string): Site => ({
    path,
    text,
    whole: false,
    job: null,
    item: false,
    label: `'${path.join('.')}'`,
  });
  if (pipeline.concurrency) {
    found.push(admission(['concurrency', 'group'], pipeline.concurrency.group));
    found.push({ ...admission(['concurrency', 'policy'], pipeline.concurrency.policy), whole: pipeline.concurrency.policy.includes('${{') });
  }
  if (pipeline.throttle) found.push(admission(['throttle', 'key'], pipeline.throttle.key));
  for (const job of pipeline.jobs) {
    const at = (path: DocumentPath, text: string, whole = false, item = false): Site => ({
      path: ['jobs', job.name, ...path],
      text,
      whole,
      job: job.name,
      item,
      label: `'${path.join('.')}' of job '${job.name}'`,
    });
    const steps = (prefix: DocumentPath, list: Step[] | null, item: boolean) =>
      (list ?? []).map((step, i) => at([...prefix, i, 'run'], step.run, false, item));
    if (job.if !== null) found.push(at(['if'], job.if, true));
    found.push(...steps(['steps'], job.steps, false));
    if (job.script !== null) found.push(at(['script'], job.script));
    if (job.approval) found.push(at(['approval', 'prompt'], job.approval.prompt));
    if (job.approval?.timeout) found.push(at(['approval', 'timeout'], job.approval.timeout));
    if (job.concurrency) found.push(at(['concurrency', 'group'], job.concurrency.group));
    if (job.fanOut) {
      if (typeof job.fanOut.items === 'string') found.push(at(['fan_out', 'items'], job.fanOut.items, true));
      found.push(...steps(['fan_out', 'steps'], job.fanOut.steps, true));
      // The child workflow is a file read when the run is submitted, not per item.
      if (job.fanOut.workflow?.includes('${{')) {
        throw new PipelineProblem("'workflow' is a file path; it takes no ${{ }} expressions", [
          'jobs',
          job.name,
          'fan_out',
          'workflow',
        ]);
      }
    }
  }
  for (const [key, text] of Object.entries(pipeline.outputs)) {
    found.push({ path: ['outputs', key], text, whole: false, job: null, afterAll: true, item: false, label: `output '${key}'` });
  }
  return found;
}

function parseSite(site: Site): { expr: Expr; part: Extract<TemplatePart, { kind: 'expr' }> }[] {
  try {
    let parts: Extract<TemplatePart, { kind: 'expr' }>[];
    if (site.whole) {
      const sole = soleExpression(site.text);
      if (!sole)
        throw new PipelineProblem(
          `${site.label} must be exactly one \${{ }} expression, with nothing around it`,
          site.path,
        );
      parts = [sole];
    } else {
      parts = scanTemplate(site.text).filter((part) => part.kind === 'expr');
    }
    return parts.map((part) => {
      try {
        return { expr: parseExpressionAt(site.text, part.sourceAt, part.sourceAt + part.source.length), part };
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error;
        throw new PipelineProblem(
          `bad expression ${site.text.slice(part.at, part.end)}: ${error.reason}`,
          site.path,
          'value',
          error.offset,
        );
      }
    });
  } catch (error) {
    // Only an unclosed `${{` gets here; it has no expression to quote.
    if (!(error instanceof ExpressionError)) throw error;
    throw new PipelineProblem(error.reason, site.path, 'value', error.offset);
  }
}

function checkPath(
  site: Site,
  part: Extract<TemplatePart, { kind: 'expr' }>,
  path: Extract<Expr, { kind: 'path' }>,
  jobNames: readonly string[],
  upstream: Map<string, Set<string>>,
): void {
  const problem = (reason: string) => new PipelineProblem(reason, site.path, 'value', path.at);
  const expression = site.text.slice(part.at, part.end);
  if (path.root === 'item' && !site.item)
    throw problem(`'item' is only defined in a fan_out's steps, not in ${site.label}`);
  if (path.root !== 'steps') return;
  const job = String(path.keys[0]);
  if (!jobNames.includes(job))
    throw problem(`unknown job '${job}' in expression ${expression}${suggest(job, jobNames)}`);
  if (site.afterAll) return;
  if (site.job === null)
    throw problem(`${site.label} is decided before any job runs, so it can read input but not ${path.text}`);
  if (job === site.job)
    throw problem(`job '${job}' reads its own ${path.text}; a job sees only the jobs it depends on`);
  if (!upstream.get(site.job)?.has(job)) {
    throw problem(
      `job '${site.job}' reads ${path.text} but does not depend on '${job}', so it may not have run yet; add it to depends_on`,
    );
  }
}
