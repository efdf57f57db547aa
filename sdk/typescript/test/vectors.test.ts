import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resetConnection } from '../src/connection.js';
import { setSuspendHandler, type SuspendHandler } from '../src/suspend.js';
import * as sdk from '../src/index.js';
import { FakeAgent, type Exchange } from './fake-agent.js';

/**
 * The shared protocol vectors (sdk/testdata, format in its README): each call, on a new connection
 * to a scripted agent, must send exactly the vector's requests and end as its outcome says.
 */

type Call = Record<string, unknown> & { fn: string };
interface Outcome {
  returns?: unknown;
  raises?: 'StepFailed' | 'ScriptError' | 'AgentUnavailable' | 'function';
  suspends?: boolean;
  kind?: string;
  message?: string;
  exitCode?: number;
  stdout?: string;
  functionCalls?: number;
  bodyRuns?: boolean;
}
interface Vector {
  name: string;
  call: Call;
  exchanges: Exchange[];
  outcome: Outcome;
}

const directory = new URL('../../testdata/vectors/', import.meta.url);
const files = readdirSync(directory).filter((file) => file.endsWith('.json'));
const vectors = files.flatMap((file) =>
  (JSON.parse(readFileSync(new URL(file, directory), 'utf8')) as { vectors: Vector[] }).vectors.map((vector) => ({ file, vector })),
);

/** Values JSON cannot hold, for the vector whose function returns one (`returnsNonJson`). */
const NON_JSON: [string, () => unknown][] = [
  ['a bigint', () => 10n],
  ['a function', () => () => 1],
  ['a Map', () => new Map([['a', 1]])],
  ['NaN', () => ({ amount: Number.NaN })],
];

const ms = (seconds: unknown): number | undefined => (seconds === undefined ? undefined : Number(seconds) * 1000);
const str = (value: unknown): string => String(value);
const opt = <T>(value: unknown): T | undefined => value as T | undefined;

interface Counters {
  functionCalls: number;
  bodyRuns: boolean;
}

/** The vector's call, made with the TypeScript names and units. */
function makeCall(call: Call, counters: Counters, nonJson?: () => unknown): Promise<unknown> {
  const activityOptions = {
    requires: opt<string[]>(call.requires),
    retries: opt<number>(call.retries),
    retryBackoffMs: ms(call.retryBackoffSeconds),
    retryOnExit: opt<number[]>(call.retryOnExit),
  };
  switch (call.fn) {
    case 'step':
      if (call.check !== false) return sdk.step(str(call.name), call.argv as string[]);
      // The vectors speak of stdout as text; bytes must be exactly that text's bytes.
      return sdk.step(str(call.name), call.argv as string[], { check: false }).then(({ bytes, ...result }) => {
        expect(Buffer.from(bytes).toString('utf8')).toBe(result.stdout);
        return result;
      });
    case 'step_fn':
      return sdk.stepFn(str(call.name), () => {
        counters.functionCalls++;
        if (call.throws !== undefined) throw new Error(str(call.throws));
        if (call.returnsNonJson === true && nonJson) return nonJson();
        return call.returns;
      });
    case 'sleep':
      return sdk.sleep(Number(call.seconds) * 1000);
    case 'wait_signal':
      return sdk.waitSignal(str(call.name), { timeoutMs: ms(call.timeoutSeconds) });
    case 'wait_event':
      return sdk.waitEvent(str(call.type), { timeoutMs: ms(call.timeoutSeconds) });
    case 'lock':
      return sdk.lock(str(call.group), () => {
        counters.bodyRuns = true;
      });
    case 'activity':
      return sdk.activity(str(call.name), call.argv as string[], activityOptions);
    case 'activity_submit':
      return sdk.activitySubmit(str(call.name), call.argv as string[], activityOptions);
    case 'activity_collect':
      return sdk.activityCollect(str(call.name));
    case 'activity_wait_all':
      return sdk.activityWaitAll();
    case 'emit':
      return sdk.emit(str(call.type), { payload: call.payload, subject: opt<string>(call.subject) });
    case 'spawn':
      return sdk.spawn(call.kind as sdk.SpawnKind, str(call.text), { input: call.input });
    case 'state_get':
      return sdk.stateGet(str(call.key), { entity: opt<string>(call.entity) });
    case 'state_set':
      return sdk.stateSet(str(call.key), call.value, { entity: opt<string>(call.entity) });
    case 'state_add':
      return sdk.stateAdd(str(call.key), { value: call.value, entity: opt<string>(call.entity) });
    case 'state_delete':
      return sdk.stateDelete(str(call.key), { entity: opt<string>(call.entity) });
    case 'state_list':
      return sdk.stateList({ prefix: opt<string>(call.prefix), entity: opt<string>(call.entity) });
    case 'output_set':
      return sdk.outputSet(str(call.key), call.value);
    case 'annotate':
      return sdk.annotate(str(call.text));
    default:
      throw new Error(`no TypeScript call for the vector's fn '${call.fn}'`);
  }
}

type Settled = { returned: unknown } | { threw: unknown } | { suspended: string };

let previousHandler: SuspendHandler;
let onSuspend: (message: string) => void = () => undefined;
const savedSocket = process.env.SPOOL_SOCKET;

beforeAll(() => {
  // The SDK's own suspension waits to be killed; here it reports, and the call stays unsettled.
  previousHandler = setSuspendHandler((message) => {
    onSuspend(message);
    return new Promise<never>(() => undefined);
  });
});

afterAll(() => {
  setSuspendHandler(previousHandler);
  if (savedSocket === undefined) delete process.env.SPOOL_SOCKET;
  else process.env.SPOOL_SOCKET = savedSocket;
});

afterEach(async () => {
  await resetConnection();
});

async function run(vector: Vector, nonJson?: () => unknown): Promise<{ settled: Settled; counters: Counters; agent: FakeAgent }> {
  const agent = await FakeAgent.start(vector.exchanges);
  process.env.SPOOL_SOCKET = agent.path;
  await resetConnection(); // each vector on a new connection, so agent.info is asked afresh
  const counters: Counters = { functionCalls: 0, bodyRuns: false };
  try {
    const settled = await new Promise<Settled>((resolve) => {
      onSuspend = (message) => resolve({ suspended: message });
      let call: Promise<unknown>;
      try {
        call = makeCall(vector.call, counters, nonJson);
      } catch (error) {
        resolve({ threw: error });
        return;
      }
      call.then(
        (returned) => resolve({ returned }),
        (threw: unknown) => resolve({ threw }),
      );
    });
    await resetConnection();
    await agent.drained();
    return { settled, counters, agent };
  } finally {
    await agent.close();
  }
}

function check(vector: Vector, { settled, counters, agent }: Awaited<ReturnType<typeof run>>): void {
  const { outcome } = vector;
  expect(agent.problems).toEqual([]);
  expect(agent.received).toEqual(vector.exchanges.map((exchange) => exchange.request));
  if (outcome.suspends) {
    expect(settled).toEqual({ suspended: expect.stringContaining('script suspended awaiting') as unknown });
  } else if (outcome.raises) {
    if (!('threw' in settled)) throw new Error(`expected ${outcome.raises}, got ${JSON.stringify(settled)}`);
    const error = settled.threw;
    switch (outcome.raises) {
      case 'StepFailed':
        expect(error).toBeInstanceOf(sdk.StepFailed);
        expect(error).toMatchObject({ code: 'step_failed', exitCode: outcome.exitCode, stdout: outcome.stdout });
        break;
      case 'ScriptError':
        expect(error).toBeInstanceOf(sdk.ScriptError);
        expect(error).toMatchObject({ code: 'script_error', kind: outcome.kind });
        expect((error as Error).message).toContain(outcome.message);
        break;
      case 'AgentUnavailable':
        expect(error).toBeInstanceOf(sdk.AgentUnavailable);
        expect(error).toMatchObject({ code: 'agent_unavailable' });
        break;
      case 'function':
        expect(error).not.toBeInstanceOf(sdk.SpoolError);
        expect((error as Error).message).toBe(outcome.message);
        break;
    }
  } else {
    if (!('returned' in settled)) throw new Error(`expected a return, got ${String((settled as { threw?: unknown }).threw ?? JSON.stringify(settled))}`);
    // A call that returns nothing returns undefined in TypeScript; the vectors write that as null.
    expect(settled.returned ?? null).toEqual(outcome.returns);
  }
  if (outcome.functionCalls !== undefined) expect(counters.functionCalls).toBe(outcome.functionCalls);
  if (outcome.bodyRuns !== undefined) expect(counters.bodyRuns).toBe(outcome.bodyRuns);
}

describe('the shared protocol vectors', () => {
  it('are all here', () => {
    expect(files.sort()).toEqual(expect.arrayContaining(['activity.json', 'calls.json', 'lock.json', 'state.json', 'step.json', 'step_fn.json', 'waits.json']));
    expect(vectors.length).toBeGreaterThan(50);
  });

  for (const { file, vector } of vectors) {
    if (vector.call.returnsNonJson === true) {
      for (const [what, value] of NON_JSON) {
        it(`${file}: ${vector.name} (${what})`, async () => check(vector, await run(vector, value)));
      }
    } else {
      it(`${file}: ${vector.name}`, async () => check(vector, await run(vector)));
    }
  }
});
