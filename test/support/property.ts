import fc from 'fast-check';

/**
 * fast-check's parameters for a boundary's property test: a random seed each run (so CI explores),
 * printed up front, and FC_SEED=<seed> to run that seed again. A counterexample a seed found is
 * then kept in the test as a fixed example, which every run tries first. FC_RUNS=<n> explores
 * longer than the bounded count a test runs in `npm test`.
 */
export function propertyRuns<Ts>(name: string, cases: number, examples: Ts[] = []): fc.Parameters<Ts> {
  const numRuns = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : cases;
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Math.floor(Math.random() * 2 ** 31);
  process.stdout.write(`${name}: fast-check seed ${seed} (FC_SEED=${seed} repeats it), ${numRuns} cases\n`);
  return { seed, numRuns, examples };
}
