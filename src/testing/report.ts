import { formatDuration } from '../common/duration.js';
import { journalTable } from '../cli/control/format.js';
import { outcomeOf } from './expectations.js';
import type { CaseRun } from './run-case.js';

/** One case's verdict, as `spool test` prints it, as `--json` gives it and as `--junit` records it. */
export interface CaseReport {
  workflow: string;
  testFile: string | null;
  case: string;
  passed: boolean;
  failures: string[];
  realMs: number;
  /** Absent when the case could not run at all (its failure says why). */
  result?: CaseRun;
}

const indent = (text: string, by = '    '): string =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => by + line)
    .join('\n');

/** What a person reads for one case: a line, and for a failure what was expected, what happened and the journal. */
export function caseText(report: CaseReport): string {
  const took = report.result ? `${formatDuration(report.result.virtualMs)} virtual, ` : '';
  const head = `${report.passed ? 'PASS' : 'FAIL'} ${report.workflow} › ${report.case} (${took}${(report.realMs / 1000).toFixed(1)}s)`;
  if (report.passed) return `${head}\n`;
  const lines = [head, ...report.failures.map((failure) => `  ${failure}`)];
  const result = report.result;
  if (result) {
    const { run } = result;
    lines.push(`  the run ${run.id} ${outcomeOf(run) === 'waiting' ? `was waiting for ${run.awaiting ?? '?'}` : run.status}${run.error ? `: ${run.error}` : ''}`);
    lines.push('  its journal:', indent(result.journal.length > 0 ? journalTable(result.journal) : '(empty)'));
    if (result.log.trim() !== '') lines.push('  its log:', indent(lastLines(result.log, 40)));
  }
  return `${lines.join('\n')}\n`;
}

export function summaryText(reports: CaseReport[]): string {
  const failed = reports.filter((report) => !report.passed).length;
  return `${reports.length} case${reports.length === 1 ? '' : 's'}: ${reports.length - failed} passed, ${failed} failed\n`;
}


function lastLines(text: string, count: number): string {
  const lines = text.trimEnd().split('\n');
  return lines.length <= count ? lines.join('\n') : [`(${lines.length - count} lines before)`, ...lines.slice(-count)].join('\n');
}

/** `--json`: each case with what its run came to, for the SDKs' helpers and other tools. */
export function caseJson(report: CaseReport): Record<string, unknown> {
  const result = report.result;
  return {
    workflow: report.workflow,
    testFile: report.testFile,
    case: report.case,
    passed: report.passed,
    failures: report.failures,
    realMs: report.realMs,
    ...(result
      ? {
          runId: result.run.id,
          outcome: outcomeOf(result.run),
          error: result.run.error,
          awaiting: outcomeOf(result.run) === 'waiting' ? result.run.awaiting : null,
          outputs: result.run.outputs,
          steps: result.steps,
          state: result.state,
          runs: result.runs.length,
          virtualMs: result.virtualMs,
          journal: result.journal.map(({ position, kind, verb, name, data }) => ({ position, kind, verb, name, data })),
          log: result.log,
        }
      : {}),
  };
}

const xml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c).replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/gu, '\uFFFD');

/** `--junit FILE`: JUnit XML, one testsuite per workflow file, as CI systems read it. */
export function junitXml(reports: CaseReport[]): string {
  const suites = new Map<string, CaseReport[]>();
  for (const report of reports) suites.set(report.workflow, [...(suites.get(report.workflow) ?? []), report]);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites tests="${reports.length}" failures="${reports.filter((r) => !r.passed).length}">`];
  for (const [workflow, cases] of suites) {
    const seconds = cases.reduce((sum, each) => sum + each.realMs, 0) / 1000;
    out.push(`  <testsuite name="${xml(workflow)}" tests="${cases.length}" failures="${cases.filter((c) => !c.passed).length}" time="${seconds.toFixed(3)}">`);
    for (const each of cases) {
      const open = `    <testcase classname="${xml(workflow)}" name="${xml(each.case)}" time="${(each.realMs / 1000).toFixed(3)}"`;
      if (each.passed) {
        out.push(`${open}/>`);
        continue;
      }
      out.push(`${open}>`, `      <failure message="${xml(each.failures[0] ?? 'failed')}">${xml(caseText(each))}</failure>`, '    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
