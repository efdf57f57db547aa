import { PipelineProblem, type DocumentPath } from './problem.js';
import { suggest } from './suggest.js';
import type { Pipeline } from './types.js';

/** What the depends_on checks need of a pipeline's jobs or a graph's nodes. */
interface Vertex {
  name: string;
  dependsOn: string[];
}

/** Checks a pipeline's depends_on graph (checkDependencies); its jobs are keys of `jobs`. */
export function checkGraph(pipeline: Pipeline): void {
  checkDependencies(pipeline.jobs, (name) => ['jobs', name], 'job');
}

/**
 * Checks a depends_on graph: every name is a job (or a graph's node), and there is no cycle (a
 * cycle would leave every job in it waiting for ever). Problems point at the depends_on entry at
 * fault; `at` is where a job is in the document, `noun` what the document calls one.
 */
export function checkDependencies(vertices: readonly Vertex[], at: (name: string) => DocumentPath, noun: string): void {
  const jobs = new Map(vertices.map((job) => [job.name, job]));
  for (const job of vertices) {
    job.dependsOn.forEach((dependency, i) => {
      if (!jobs.has(dependency)) {
        throw new PipelineProblem(
          `depends_on names unknown ${noun} '${dependency}'${suggest(dependency, [...jobs.keys()])}`,
          [...at(job.name), 'depends_on', i],
        );
      }
    });
  }

  // Depth first, in document order, so the cycle reported is the first one a reader meets.
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    state.set(name, 'visiting');
    stack.push(name);
    (jobs.get(name)?.dependsOn ?? []).forEach((dependency, i) => {
      const seen = state.get(dependency);
      if (seen === 'visiting') {
        const cycle = [...stack.slice(stack.indexOf(dependency)), dependency];
        // Point at the first arrow of the message: the cycle's earliest job in the document, which
        // depends on a job written after it (the back edge people usually add by mistake).
        const [from = name, to = dependency] = cycle;
        const entry = from === name ? i : (jobs.get(from)?.dependsOn.indexOf(to) ?? 0);
        throw new PipelineProblem(`cycle in depends_on: ${cycle.join(' -> ')}`, [...at(from), 'depends_on', entry]);
      }
      if (seen === undefined) visit(dependency);
    });
    stack.pop();
    state.set(name, 'done');
  };
  for (const job of vertices) if (!state.has(job.name)) visit(job.name);
}

/**
 * Each job's ancestors: the jobs it depends on, directly or through others. These are the jobs
 * that have finished when it starts, so the only ones whose steps.<job> it can read. Call after
 * checkGraph (it assumes no cycle).
 */
export function ancestors(vertices: readonly Vertex[]): Map<string, Set<string>> {
  const jobs = new Map(vertices.map((job) => [job.name, job]));
  const result = new Map<string, Set<string>>();
  const of = (name: string): Set<string> => {
    const known = result.get(name);
    if (known) return known;
    const found = new Set<string>();
    for (const dependency of jobs.get(name)?.dependsOn ?? []) {
      found.add(dependency);
      for (const further of of(dependency)) found.add(further);
    }
    result.set(name, found);
    return found;
  };
  for (const job of vertices) of(job.name);
  return result;
}
