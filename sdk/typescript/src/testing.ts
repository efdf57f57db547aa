/**
 * @hyperspool/sdk/testing: test a workflow from vitest, node:test or any runner through
 * `spool test` (docs/testing-workflows.md, docs/sdks.md). Its cases run on an in-memory store with
 * a virtual clock, so a 14-day sleep takes no real time.
 *
 *     const result = await runCase('trial.mjs', {
 *       signals: [{ at: '15d', name: 'upgrade', payload: 'pro' }],
 *       stubs: { steps: { charge: { stdout: 'rcpt-1' } } },
 *       expect: { outputs: { plan: 'pro' }, time: '15d' },
 *     });
 *     assertPassed(result);
 *
 * A case has the keys of a `NAME.test.yaml` case (`spool test` checks them); a duration is the
 * CLI's text ('15d', '1h30m') or milliseconds. The CLI is `options.cli`, else `$SPOOL_CLI`, else
 * `spool` on the PATH. Not for workflows: this module runs a process and is Node-only.
 */
import { execFile } from 'node:child_process';
import { AssertionError } from 'node:assert';

/** The CLI's duration text ('15d', '1h30m'), or milliseconds. */
export type Duration = string | number;

export interface Signal {
  at?: Duration;
  name: string;
  payload?: unknown;
}
export interface Event {
  at?: Duration;
  type: string;
  key?: string;
  payload?: unknown;
}
export interface Approval {
  at?: Duration;
  job: string;
  answer?: 'approve' | 'reject';
  by?: string;
  values?: unknown;
}
/** A step's stubbed result: a command's stdout and exit code, or a step function's value. */
export type StepStub = { stdout?: string; exit?: number } | { value: unknown };
export interface HttpStub {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
}
export interface Expect {
  outcome?: 'succeeded' | 'failed' | 'cancelled' | 'waiting';
  error?: string;
  outputs?: Record<string, unknown>;
  steps?: string[];
  state?: Record<string, unknown>;
  time?: Duration;
  runs?: number;
  log?: string;
}
export interface Case {
  name?: string;
  input?: unknown;
  on?: string;
  schedule?: { every: Duration; ticks: number };
  signals?: Signal[];
  events?: Event[];
  approvals?: Approval[];
  stubs?: { steps?: Record<string, StepStub>; http?: Record<string, HttpStub> };
  /** Left out: the run must succeed. An expectation left out of it is not checked. */
  expect?: Expect;
}

export interface JournalEntry {
  position: number;
  kind: string;
  verb: string;
  name: string;
  data: unknown;
}

/** One case's verdict, as `spool test --json` gives it; the run's fields are absent when the case could not run. */
export interface CaseResult {
  workflow: string;
  testFile: string | null;
  case: string;
  passed: boolean;
  /** One line per unmet expectation. */
  failures: string[];
  realMs: number;
  runId?: string;
  outcome?: 'succeeded' | 'failed' | 'cancelled' | 'waiting';
  error?: string | null;
  awaiting?: string | null;
  outputs?: Record<string, string>;
  steps?: string[];
  state?: Record<string, string | null>;
  runs?: number;
  /** The virtual time from the start until the last run ended. */
  virtualMs?: number;
  journal?: JournalEntry[];
  log?: string;
}

export interface TestOptions {
  /** The spool CLI; else `$SPOOL_CLI`, else `spool` on the PATH. */
  cli?: string;
  /** Each pass in a new, empty working directory, as each pass on a cluster is a new pod. */
  freshDir?: boolean;
}

/** `spool test` refused the case or the workflow (its one line), or could not be run. */
export class SpoolTestError extends Error {
  override name = 'SpoolTestError';
}

/** Runs one case built here against the workflow file. */
export async function runCase(workflow: string, testCase: Case, options: TestOptions = {}): Promise<CaseResult> {
  const [result] = await spoolTest(workflow, [testCase], options);
  return result!;
}

/** Runs these cases, or without any the workflow's own test file (`trial.mjs` → `trial.test.yaml`). */
export function runCases(workflow: string, cases?: Case[], options: TestOptions = {}): Promise<CaseResult[]> {
  return spoolTest(workflow, cases, options);
}

/** Throws an AssertionError with the case's report when it failed. */
export function assertPassed(result: CaseResult): void {
  if (!result.passed) throw new AssertionError({ message: caseReport(result) });
}

/** What a person reads: the verdict, each failure, how the run ended, its journal and log. */
export function caseReport(result: CaseResult): string {
  const lines = [`${result.passed ? 'PASS' : 'FAIL'} ${result.workflow} › ${result.case}`, ...result.failures.map((failure) => `  ${failure}`)];
  if (result.runId !== undefined) {
    const waiting = result.outcome === 'waiting' ? ` for ${result.awaiting ?? '?'}` : '';
    lines.push(`  the run ${result.runId} ${result.outcome ?? '?'}${waiting}${result.error ? `: ${result.error}` : ''}`, '  its journal:');
    for (const entry of result.journal ?? []) {
      lines.push(`    ${String(entry.position + 1).padStart(3)} ${entry.kind.padEnd(6)} ${entry.verb.padEnd(12)} ${entry.name} ${JSON.stringify(entry.data)}`);
    }
    const log = (result.log ?? '').trimEnd();
    if (log !== '') lines.push('  its log:', ...log.split('\n').slice(-40).map((line) => `    ${line}`));
  }
  return lines.join('\n');
}

async function spoolTest(workflow: string, cases: Case[] | undefined, options: TestOptions): Promise<CaseResult[]> {
  const cli = options.cli ?? process.env.SPOOL_CLI ?? 'spool';
  const args = ['test', workflow, '--json', ...(cases === undefined ? [] : ['--case', JSON.stringify(cases.map(withDurationText))])];
  if (options.freshDir) args.push('--fresh-dir');
  const { code, stdout, stderr } = await new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
    execFile(cli, args, { maxBuffer: 256 * 1024 * 1024 }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? null) : 0, stdout: out, stderr: err });
    });
  });
  if (code === 'ENOENT') throw new SpoolTestError(`no spool CLI at '${cli}': set SPOOL_CLI to its path or put spool on the PATH`);
  if (code !== 0 && code !== 1) {
    // Exit 2 is bad input, one line on stderr; anything else is the CLI failing.
    const said = stderr.trim() || `spool test exited ${String(code)} and said nothing`;
    throw new SpoolTestError(code === 2 ? said : `spool test exited ${String(code)}: ${said}`);
  }
  try {
    return JSON.parse(stdout) as CaseResult[];
  } catch (error) {
    throw new SpoolTestError(`spool test --json printed what is not its report (${String(error)}): ${stdout.slice(0, 200)}`);
  }
}

const ms = (duration: Duration): string => (typeof duration === 'number' ? `${duration}ms` : duration);
const timed = <T extends { at?: Duration }>(list: T[] | undefined): T[] | undefined => list?.map((each) => (each.at === undefined ? each : { ...each, at: ms(each.at) }));

/** The case with its durations as the CLI's text (milliseconds as `NNNms`), payloads untouched. */
function withDurationText(testCase: Case): Case {
  return {
    ...testCase,
    ...(testCase.schedule && { schedule: { ...testCase.schedule, every: ms(testCase.schedule.every) } }),
    ...(testCase.signals && { signals: timed(testCase.signals) }),
    ...(testCase.events && { events: timed(testCase.events) }),
    ...(testCase.approvals && { approvals: timed(testCase.approvals) }),
    ...(testCase.expect?.time !== undefined && { expect: { ...testCase.expect, time: ms(testCase.expect.time) } }),
  };
}
