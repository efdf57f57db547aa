import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../support/spool.js';
import { check, type Violation } from './check.js';
import { ALL_KINDS, GRAPH_KINDS, KINDS_BEFORE_ANSWERED, LATER_KINDS, generate } from './generate.js';
import { Random, freshSeed } from './random.js';
import type { Killed } from './hosts.js';
import { runWorkflow, type Form } from './run.js';

/**
 * The replay verifier (issue 28): random workflows from every in-script verb, each run twice with
 * every pass in a new, empty directory, as a pod: once uninterrupted (`spool run --fresh-dir`) and
 * once with faults, and the invariants checked on both (check.ts). The faults kill, at random
 * moments, either the runner (the agent) and its scripts, carried on with `spool resume`, or a
 * `spool dev --fresh-dir` the run was submitted to, with its scripts, started again on its data dir,
 * or the script alone once, its runner left alive: the run fails saying so (or carries on, when the
 * kill met a script already being suspended), nothing recorded is lost and no body runs again; or
 * the launcher that starts the scripts alone, once: the pass it ran is lost and the run carries on. A new seed every run, printed; VERIFY_SEED=N runs one,
 * VERIFY_CASES=N sizes a run (default 2, after the saved seeds), and `npm run verify` runs for VERIFY_MINUTES (default 20).
 * Waits for a signal or an event are answered from outside, as a user would (deliveries.ts): before
 * the wait, while it waits, or across a kill; they need a server, so such a workflow runs uninterrupted
 * on `spool dev`, and a killed runner hands its run to `spool dev` (run.ts).
 * Seeds that once failed are in seeds.json and run every time. Each seed picks its form (seed % 3):
 * bash through the native client, bash through the Node client, or Python through its SDK.
 */

afterAll(removeTempDirs);

const saved = (JSON.parse(readFileSync(new URL('./seeds.json', import.meta.url), 'utf8')) as { seeds: { seed: number; form?: Form; kills?: Killed; waits?: boolean; graphs?: boolean }[] }).seeds;
const FORMS: readonly Form[] = ['native', 'node', 'python'];
/**
 * A seed's form: the one it failed in, for a saved seed (those saved without one were bash, when the
 * form was seed % 2 of native and node); else seed % 3.
 */
function formOf(seed: number): Form {
  const kept = saved.find((each) => each.seed === seed);
  if (kept) return kept.form ?? (seed % 2 === 0 ? 'native' : 'node');
  return FORMS[seed % 3] ?? 'native';
}
/**
 * What a seed's faults kill: what they killed when it failed, for a saved seed (the runner unless it
 * says so); else the runner, the dev server, the script alone, the launcher alone or a cancel by
 * floor(seed / 3) % 5, so each form gets all five.
 */
const KILLED: readonly Killed[] = ['runner', 'dev-server', 'script', 'launcher', 'cancel'];
function killedBy(seed: number): Killed {
  const kept = saved.find((each) => each.seed === seed);
  if (kept) return kept.kills ?? 'runner';
  return KILLED[Math.floor(seed / 3) % KILLED.length] ?? 'runner';
}
const KILLS: Record<Killed, string> = { runner: 'the runner', 'dev-server': 'the dev server', script: 'the script alone', launcher: 'the launcher alone', cancel: 'nothing: a spool cancel' };
const described = (seed: number): string => `${formOf(seed)}, kills ${KILLS[killedBy(seed)]}`;
const minutes = Number(process.env.VERIFY_MINUTES ?? 0);
const count = Number(process.env.VERIFY_CASES ?? 2);
const seeds = process.env.VERIFY_SEED ? [Number(process.env.VERIFY_SEED)] : [...saved.map((each) => each.seed), ...Array.from({ length: count }, freshSeed)];

/**
 * The ops a seed is made of: a seed saved before the harness answered waits without them, one
 * saved before the graph kinds without those, and none with LATER_KINDS, so it makes the workflow it failed on.
 */
function kindsOf(seed: number): readonly typeof ALL_KINDS[number][] {
  const kept = saved.find((each) => each.seed === seed);
  if (!kept) return ALL_KINDS;
  const kinds = (kept.waits ? ALL_KINDS : KINDS_BEFORE_ANSWERED).filter((kind) => !LATER_KINDS.includes(kind));
  return kept.graphs ? kinds : kinds.filter((kind) => !GRAPH_KINDS.includes(kind));
}

/** One seed: its workflow run uninterrupted, then with faults, both checked. */
async function verify(seed: number): Promise<Violation[]> {
  const random = new Random(seed);
  const workflow = generate(seed, random, kindsOf(seed));
  const form = formOf(seed);
  const reference = await runWorkflow(workflow, form, null);
  const faulted = await runWorkflow(workflow, form, new Random(seed ^ 0x5bd1e995), killedBy(seed));
  const tails = form !== 'python';
  const violations = [...check(workflow, reference, null, tails), ...check(workflow, faulted, reference, tails)];
  const ended = `the run ${faulted.run?.status ?? 'is missing'}${faulted.run?.error ? `: ${faulted.run.error}` : ''}`;
  process.stderr.write(`replay verifier: seed ${seed}: ${faulted.faults.join(', ') || 'no fault (the run ended first)'}; ${ended}\n`);
  if (violations.length) {
    process.stderr.write(
      `replay verifier: seed ${seed} (${faulted.label}; VERIFY_SEED=${seed} npx vitest run test/verifier to run it again)\n` +
        `  ops: ${workflow.ops.map((op) => `${op.kind} ${op.id}`).join(', ')}\n` +
        `  faults: ${faulted.faults.join(', ') || 'none'}\n` +
        violations.map((each) => `  ${each.invariant}: ${each.detail}`).join('\n') +
        `\n  output (faulted run):\n${faulted.output}\n`,
    );
  }
  return violations;
}

describe('the replay verifier', () => {
  if (minutes > 0) {
    it(`holds its invariants for random seeds, for ${minutes} minutes`, async () => {
      const deadline = Date.now() + minutes * 60_000;
      const failed: number[] = [];
      while (Date.now() < deadline) {
        const seed = freshSeed();
        process.stderr.write(`replay verifier: seed ${seed} (${described(seed)})\n`);
        if ((await verify(seed)).length) failed.push(seed);
      }
      expect(failed).toEqual([]);
    }, minutes * 60_000 + 600_000);
    return;
  }
  it.each(seeds)('holds its invariants for seed %i', async (seed) => {
    process.stderr.write(`replay verifier: seed ${seed} (${described(seed)})\n`);
    expect((await verify(seed)).map((each) => `${each.invariant}: ${each.detail}`)).toEqual([]);
  }, 400_000);
});
