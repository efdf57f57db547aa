import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { UsageError } from '../common/errors.js';
import { parseDuration } from '../common/duration.js';
import { readTextFile } from '../common/text-file.js';
import type { HttpStub, StepStub } from '../engine/pass.js';
import { readYaml } from '../pipeline/read-yaml.js';

/** Something the test does to its run at a virtual time after the start: a signal, an event, an answer. */
export type Delivery =
  | { kind: 'signal'; atMs: number; name: string; payload: string }
  | { kind: 'event'; atMs: number; type: string; key: string | null; payload: unknown }
  | { kind: 'approval'; atMs: number; job: string; answer: 'approve' | 'reject'; by: string | null; values: unknown };

/** How the case starts the workflow: once, for each event of a type (a handler), or on a schedule. */
export type Start = { kind: 'once' } | { kind: 'handler'; on: string } | { kind: 'schedule'; everyMs: number; ticks: number };

export interface Expectations {
  outcome?: 'succeeded' | 'failed' | 'cancelled' | 'waiting';
  /** Words the run's error holds. */
  error?: string;
  outputs?: Record<string, string>;
  /** The steps that ran (or were stubbed), in order: the run's and its jobs' and nodes'. */
  steps?: string[];
  /** Cells: `KEY` of the run, `ENTITY/KEY` of an entity. */
  state?: Record<string, string>;
  /** The virtual time from the start until the last run ended. */
  timeMs?: number;
  /** How many runs the case started (handlers, schedules). */
  runs?: number;
  /** Words the run's log holds. */
  log?: string;
}

export interface TestCase {
  name: string;
  input: unknown;
  start: Start;
  deliveries: Delivery[];
  steps: Map<string, StepStub>;
  http: Map<string, HttpStub>;
  expect: Expectations;
}

const CASE_KEYS = ['name', 'input', 'on', 'schedule', 'signals', 'events', 'approvals', 'stubs', 'expect'];
const EXPECT_KEYS = ['outcome', 'error', 'outputs', 'steps', 'state', 'time', 'runs', 'log'];
const OUTCOMES = ['succeeded', 'failed', 'cancelled', 'waiting'] as const;

/** The test file beside a workflow file: `trial.sh` → `trial.test.yaml`. */
export function testFileOf(workflow: string): string {
  return join(dirname(workflow), `${basename(workflow, extname(workflow))}.test.yaml`);
}

/**
 * The cases of a test file (a list of cases, or a map with `cases:`); without one, a single case
 * that passes when the run succeeds. Anything wrong is refused in one line naming the file, the case
 * and the field.
 */
export function readTestCases(workflow: string): { file: string | null; cases: TestCase[] } {
  const file = testFileOf(workflow);
  if (!existsSync(file)) return { file: null, cases: [{ ...parseCase({}, 0, ''), name: 'runs to success', expect: { outcome: 'succeeded' } }] };
  return { file, cases: parseCases(readYaml(readTextFile(file), file).data, file) };
}

/** Cases given as YAML or JSON text (`spool test --case`, the SDKs' helpers). */
export function parseCases(data: unknown, where: string): TestCase[] {
  const list = Array.isArray(data) ? data : isMap(data) && Array.isArray(data.cases) ? data.cases : isMap(data) && !('cases' in data) ? [data] : null;
  if (!list) throw new UsageError(`${where}: a test file is a list of cases, or a map with 'cases:' holding one`);
  if (list.length === 0) throw new UsageError(`${where}: no cases`);
  const cases = list.map((raw, index) => parseCase(raw, index, where));
  const names = new Set<string>();
  for (const each of cases) {
    if (names.has(each.name)) throw new UsageError(`${where}: two cases are named '${each.name}'; give each its own name`);
    names.add(each.name);
  }
  return cases;
}

function parseCase(raw: unknown, index: number, where: string): TestCase {
  if (!isMap(raw)) throw new UsageError(`${where}: case ${index + 1} is not a map`);
  const name = raw.name === undefined ? `case ${index + 1}` : text(raw.name, `${where}: case ${index + 1}: name`);
  const at = `${where}: case '${name}'`;
  unknownKey(raw, CASE_KEYS, at);
  const deliveries = [
    ...list(raw.signals, `${at}: signals`).map((each, i) => signal(each, `${at}: signals[${i}]`)),
    ...list(raw.events, `${at}: events`).map((each, i) => event(each, `${at}: events[${i}]`)),
    ...list(raw.approvals, `${at}: approvals`).map((each, i) => approval(each, `${at}: approvals[${i}]`)),
  ].sort((a, b) => a.atMs - b.atMs);
  const stubs = raw.stubs === undefined ? {} : map(raw.stubs, `${at}: stubs`);
  unknownKey(stubs, ['steps', 'http'], `${at}: stubs`);
  return {
    name,
    input: raw.input ?? null,
    start: start(raw, at),
    deliveries,
    steps: new Map(Object.entries(stubs.steps === undefined ? {} : map(stubs.steps, `${at}: stubs.steps`)).map(([step, stub]) => [step, stepStub(stub, `${at}: stubs.steps.${step}`)])),
    http: new Map(Object.entries(stubs.http === undefined ? {} : map(stubs.http, `${at}: stubs.http`)).map(([node, stub]) => [node, httpStub(stub, `${at}: stubs.http.${node}`)])),
    expect: raw.expect === undefined ? { outcome: 'succeeded' } : expectations(raw.expect, `${at}: expect`),
  };
}

function start(raw: Record<string, unknown>, at: string): Start {
  if (raw.on !== undefined && raw.schedule !== undefined) throw new UsageError(`${at}: 'on' and 'schedule' are two ways to start the workflow; give one`);
  if (raw.on !== undefined) return { kind: 'handler', on: text(raw.on, `${at}: on`) };
  if (raw.schedule === undefined) return { kind: 'once' };
  const schedule = map(raw.schedule, `${at}: schedule`);
  unknownKey(schedule, ['every', 'ticks'], `${at}: schedule`);
  const ticks = schedule.ticks;
  if (typeof ticks !== 'number' || !Number.isInteger(ticks) || ticks < 1) throw new UsageError(`${at}: schedule.ticks is how many runs the schedule starts, a whole number of at least 1`);
  const everyMs = duration(schedule.every, `${at}: schedule.every`);
  if (everyMs <= 0) throw new UsageError(`${at}: schedule.every must be longer than 0s`);
  return { kind: 'schedule', everyMs, ticks };
}

function signal(raw: unknown, at: string): Delivery {
  const given = map(raw, at);
  unknownKey(given, ['at', 'name', 'payload'], at);
  return { kind: 'signal', atMs: when(given.at, at), name: text(given.name, `${at}.name`), payload: payloadText(given.payload) };
}

function event(raw: unknown, at: string): Delivery {
  const given = map(raw, at);
  unknownKey(given, ['at', 'type', 'key', 'payload'], at);
  const key = given.key === undefined ? null : text(given.key, `${at}.key`);
  return { kind: 'event', atMs: when(given.at, at), type: text(given.type, `${at}.type`), key, payload: given.payload ?? null };
}

function approval(raw: unknown, at: string): Delivery {
  const given = map(raw, at);
  unknownKey(given, ['at', 'job', 'answer', 'by', 'values'], at);
  const answer = given.answer ?? 'approve';
  if (answer !== 'approve' && answer !== 'reject') throw new UsageError(`${at}.answer is approve or reject, not '${String(answer)}'`);
  const by = given.by === undefined ? null : text(given.by, `${at}.by`);
  return { kind: 'approval', atMs: when(given.at, at), job: text(given.job, `${at}.job`), answer, by, values: given.values ?? null };
}

function stepStub(raw: unknown, at: string): StepStub {
  const given = map(raw, at);
  if ('value' in given) {
    unknownKey(given, ['value'], at);
    return { value: given.value };
  }
  unknownKey(given, ['stdout', 'exit'], at);
  const exit = given.exit ?? 0;
  if (typeof exit !== 'number' || !Number.isInteger(exit) || exit < 0 || exit > 255) throw new UsageError(`${at}.exit is an exit code, 0 to 255`);
  return { stdout: given.stdout === undefined ? '' : payloadText(given.stdout), exitCode: exit };
}

function httpStub(raw: unknown, at: string): HttpStub {
  const given = map(raw, at);
  unknownKey(given, ['status', 'headers', 'body'], at);
  const status = given.status ?? 200;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) throw new UsageError(`${at}.status is an HTTP status, 100 to 599`);
  const headers = given.headers === undefined ? {} : Object.fromEntries(Object.entries(map(given.headers, `${at}.headers`)).map(([k, v]) => [k.toLowerCase(), payloadText(v)]));
  return { status, headers, body: given.body ?? null };
}

function expectations(raw: unknown, at: string): Expectations {
  const given = map(raw, at);
  unknownKey(given, EXPECT_KEYS, at);
  const expect: Expectations = {};
  if (given.outcome !== undefined) {
    const outcome = OUTCOMES.find((each) => each === given.outcome);
    if (!outcome) throw new UsageError(`${at}.outcome is one of ${OUTCOMES.join(', ')}, not '${String(given.outcome)}'`);
    expect.outcome = outcome;
  }
  if (given.error !== undefined) expect.error = text(given.error, `${at}.error`);
  if (given.log !== undefined) expect.log = text(given.log, `${at}.log`);
  if (given.outputs !== undefined) expect.outputs = texts(given.outputs, `${at}.outputs`);
  if (given.state !== undefined) expect.state = texts(given.state, `${at}.state`);
  if (given.steps !== undefined) expect.steps = list(given.steps, `${at}.steps`).map((step, i) => text(step, `${at}.steps[${i}]`));
  if (given.time !== undefined) expect.timeMs = duration(given.time, `${at}.time`);
  if (given.runs !== undefined) {
    if (typeof given.runs !== 'number' || !Number.isInteger(given.runs) || given.runs < 0) throw new UsageError(`${at}.runs is a number of runs`);
    expect.runs = given.runs;
  }
  return expect;
}

/** A value as a script reads it: text as it is, anything else as JSON. */
export function payloadText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function when(value: unknown, at: string): number {
  return value === undefined ? 0 : duration(value, `${at}.at`);
}

function duration(value: unknown, at: string): number {
  if (typeof value === 'number' && value === 0) return 0;
  if (typeof value !== 'string') throw new UsageError(`${at} is a duration such as 30s, 2h or 3d`);
  try {
    return parseDuration(value);
  } catch (error) {
    throw new UsageError(`${at}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function texts(value: unknown, at: string): Record<string, string> {
  return Object.fromEntries(Object.entries(map(value, at)).map(([key, each]) => [key, payloadText(each)]));
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${at} must be a non-empty string`);
  return value;
}

function list(value: unknown, at: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new UsageError(`${at} must be a list`);
  return value;
}

function map(value: unknown, at: string): Record<string, unknown> {
  if (!isMap(value)) throw new UsageError(`${at} must be a map`);
  return value;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKey(given: Record<string, unknown>, known: string[], at: string): void {
  const extra = Object.keys(given).find((key) => !known.includes(key));
  if (extra !== undefined) throw new UsageError(`${at}: unknown key '${extra}' (known: ${known.join(', ')})`);
}
