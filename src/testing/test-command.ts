import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { UsageError, ensureError } from '../common/errors.js';
import { checkStartSettings } from '../dev/start-settings.js';
import { switchTracingOff } from '../tracing/tracing.js';
import { readYaml } from '../pipeline/read-yaml.js';
import { openPgliteStore } from '../store/pglite.js';
import type { Store } from '../store/store.js';
import type { ScriptSource } from '../store/types.js';
import { readWorkflowFile } from '../workflow-file/check.js';
import { unmet } from './expectations.js';
import { caseJson, caseText, junitXml, summaryText, type CaseReport } from './report.js';
import { runCase } from './run-case.js';
import { parseCases, readTestCases, testFileOf, type TestCase } from './test-file.js';

export interface TestOptions {
  /** Write a JUnit XML report here. */
  junit?: string;
  /** Print each case's result as JSON (an array) instead of the text. */
  json?: boolean;
  /** The cases as YAML or JSON text, instead of the workflow's test file (one workflow only). */
  case?: string;
  /** Each pass in a new, empty working directory, as on a cluster. */
  freshDir?: boolean;
}

const TEST_SUFFIX = '.test.yaml';

interface Suite {
  workflow: string;
  testFile: string | null;
  source: ScriptSource;
  cases: TestCase[];
}

/**
 * `spool test FILE|DIR…` (docs/testing-workflows.md): each workflow's cases on an in-memory store
 * with a virtual clock. Everything is read and checked before anything runs, so bad input is one
 * line and exit 2; then exit 0 when every case passed, 1 otherwise.
 */
export async function testWorkflows(paths: string[], options: TestOptions): Promise<number> {
  checkStartSettings();
  switchTracingOff();
  const workflows = paths.flatMap(workflowsAt);
  if (workflows.length === 0) throw new UsageError(`no workflow with a test file (NAME${TEST_SUFFIX}) in ${paths.join(', ')}`);
  if (options.case !== undefined && workflows.length !== 1) throw new UsageError('--case gives the cases of one workflow; name one file');
  const suites = workflows.map((workflow) => suiteOf(workflow, options.case));
  const store = await openPgliteStore();
  const reports: CaseReport[] = [];
  try {
    for (const suite of suites) {
      for (const testCase of suite.cases) {
        const report = await runOne(store, suite, testCase, `case-${reports.length + 1}`, options.freshDir === true);
        reports.push(report);
        if (!options.json) process.stdout.write(caseText(report));
      }
    }
  } finally {
    await store.close();
  }
  if (options.json) process.stdout.write(`${JSON.stringify(reports.map(caseJson), null, 2)}\n`);
  else process.stdout.write(summaryText(reports));
  if (options.junit) writeFileSync(options.junit, junitXml(reports));
  return reports.every((report) => report.passed) ? 0 : 1;
}

async function runOne(store: Store, suite: Suite, testCase: TestCase, project: string, freshDir: boolean): Promise<CaseReport> {
  const started = Date.now();
  const base = { workflow: suite.workflow, testFile: suite.testFile, case: testCase.name };
  try {
    const result = await runCase(store, suite.source, testCase, project, { freshDir });
    const failures = unmet(testCase.expect, result);
    return { ...base, passed: failures.length === 0, failures, realMs: Date.now() - started, result };
  } catch (error) {
    return { ...base, passed: false, failures: [`the case could not run: ${ensureError(error).message}`], realMs: Date.now() - started };
  }
}

function suiteOf(workflow: string, caseText: string | undefined): Suite {
  const { script, interpreter } = readWorkflowFile(workflow);
  const source: ScriptSource = { workflow, interpreter, script, cwd: process.cwd() };
  if (caseText !== undefined) return { workflow, testFile: null, source, cases: parseCases(readYaml(caseText, '--case').data, '--case') };
  const { file, cases } = readTestCases(workflow);
  return { workflow, testFile: file, source, cases };
}

/** A workflow file as given (or the one a test file is beside), or every workflow with a test file under a directory. */
function workflowsAt(path: string): string[] {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file or directory`);
  if (statSync(path).isDirectory()) return testFilesUnder(path).map(workflowOfTestFile);
  return [path.endsWith(TEST_SUFFIX) ? workflowOfTestFile(path) : path];
}

function testFilesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFilesUnder(path));
    else if (entry.name.endsWith(TEST_SUFFIX)) found.push(path);
  }
  return found;
}

/** The one workflow file a test file is beside: `trial.test.yaml` → `trial.sh` (or .py, .yaml, ...). */
function workflowOfTestFile(testFile: string): string {
  const stem = basename(testFile).slice(0, -TEST_SUFFIX.length);
  const dir = join(testFile, '..');
  const candidates = readdirSync(dir)
    .filter((name) => name !== basename(testFile) && name.startsWith(`${stem}.`) && !name.slice(stem.length + 1).includes('.'))
    .map((name) => join(dir, name))
    .filter((path) => testFileOf(path) === join(dir, basename(testFile)));
  if (candidates.length === 1) return candidates[0]!;
  const shown = relative(process.cwd(), testFile) || testFile;
  if (candidates.length === 0) throw new UsageError(`${shown}: no workflow file ${stem}.* beside it`);
  throw new UsageError(`${shown}: it could be the test of ${candidates.map((c) => basename(c)).join(' or ')}; name the workflow file`);
}
