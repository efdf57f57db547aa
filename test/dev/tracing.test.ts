import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTraceId } from '../../src/tracing/trace-ids.js';
import { cliOk, freePort, getRun, poll, startDevProcess, submit, waitForLog, waitForRun, type DevProcess } from '../support/dev.js';
import { startJaeger, type JaegerSpan, type TestJaeger } from '../support/jaeger.js';
import { removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

/**
 * OpenTelemetry traces (docs/tracing.md) sent to a real Jaeger and read back through its query
 * API: a run's passes under its span, each call under its pass, and a step's own program, which
 * reads TRACEPARENT, under its step. Runs under both in-script clients: each puts TRACEPARENT in a
 * step's environment.
 */

/** A step's own instrumented program: one span under the step's, sent as an OTel SDK would send it. */
const CHILD = `import { randomBytes } from 'node:crypto';
const [, traceId, parentSpanId] = (process.env.TRACEPARENT ?? '').split('-');
if (!traceId) { console.error('no TRACEPARENT'); process.exit(1); }
const start = BigInt(Date.now()) * 1000000n;
const span = { traceId, spanId: randomBytes(8).toString('hex'), parentSpanId, name: 'child work', kind: 1,
  startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1000000n) };
const body = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'step-program' } }] },
  scopeSpans: [{ scope: { name: 'test' }, spans: [span] }] }] };
const response = await fetch(process.env.OTEL_EXPORTER_OTLP_ENDPOINT + '/v1/traces',
  { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
if (!response.ok) { console.error('export failed: ' + response.status); process.exit(1); }
console.log(parentSpanId);
`;

let jaeger: TestJaeger;

beforeAll(async () => {
  jaeger = await startJaeger();
}, 600_000);

afterAll(async () => {
  await jaeger?.stop();
  removeTempDirs();
});

/** The variables that turn tracing on; a short batch delay so a long-lived server sends soon. */
function otel(serviceName?: string): Record<string, string | undefined> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: serviceName,
    OTEL_SDK_DISABLED: undefined,
    OTEL_TRACES_EXPORTER: undefined,
  };
}

/** Waits until Jaeger holds this many spans of the trace. */
async function spansOf(traceId: string, count: number): Promise<JaegerSpan[]> {
  return poll(`${count} spans of trace ${traceId} in jaeger`, async () => {
    const spans = await jaeger.spans(traceId);
    return spans.length >= count ? spans : null;
  });
}

function only(spans: JaegerSpan[], name: string, parent?: JaegerSpan): JaegerSpan {
  const found = spans.filter((span) => span.operationName === name && (!parent || span.parent === parent.spanID));
  expect(found.map((span) => span.operationName), `one span '${name}'${parent ? ` under ${parent.operationName}` : ''}`).toEqual([name]);
  return found[0]!;
}

describe('tracing with spool run', () => {
  it('given a step whose program traces, a sleep and a wait that times out (three passes), then the run is one trace: passes in order under the run, each call once under its pass, the program under its step', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'child.mjs': CHILD,
      'traced.sh': `spool step instrumented -- node child.mjs
spool sleep 1s
spool wait signal go --timeout 1s || echo "timed out: $?"
spool step after -- sh -c 'exit 3' || true
`,
    });
    const { code, output } = await spool(['run', 'traced.sh', '--data-dir', join(dir, 'data')], { cwd: dir, env: otel() });
    expect(output).toContain('timed out: 124');
    expect(code).toBe(0);
    const runId = runIdOf(output);

    // The run, 3 passes, the step, the sleep twice (suspended, then resumed), the wait twice, the
    // failing step, and the program's own span.
    const spans = await spansOf(runTraceId(runId), 11);
    expect(spans).toHaveLength(11);
    const run = only(spans, 'run traced.sh');
    expect(run.parent).toBeNull();
    expect(run.service).toBe('spool');
    expect(run.tags['spool.run.status']).toBe('succeeded');
    const passes = ['pass 1', 'pass 2', 'pass 3'].map((name) => only(spans, name, run));
    expect(passes.map((pass) => pass.startTime)).toEqual(passes.map((pass) => pass.startTime).sort((a, b) => a - b));
    expect(passes.map((pass) => pass.tags['spool.pass.outcome'])).toEqual(['suspended', 'suspended', 'succeeded']);
    // Replayed calls make no span of their own: the pass counts them.
    expect(passes.map((pass) => pass.tags['spool.pass.replayed_calls'])).toEqual([0, 1, 2]);

    const step = only(spans, 'step instrumented', passes[0]);
    expect(step.tags).toMatchObject({ 'spool.call.verb': 'step', 'spool.call.name': 'instrumented', 'spool.call.position': 0, 'spool.call.exit_code': 0 });
    const sleeping = only(spans, 'sleep', passes[0]);
    expect(sleeping.tags).toMatchObject({ 'spool.call.outcome': 'suspended', 'spool.call.resumed': false });
    expect(only(spans, 'sleep', passes[1]).tags).toMatchObject({ 'spool.call.outcome': 'ok', 'spool.call.resumed': true });
    expect(only(spans, 'wait.signal go', passes[1]).tags).toMatchObject({ 'spool.call.outcome': 'suspended', 'spool.awaiting': 'signal go' });
    expect(only(spans, 'wait.signal go', passes[2]).tags).toMatchObject({ 'spool.call.exit_code': 124, 'spool.call.resumed': true });
    const failed = only(spans, 'step after', passes[2]);
    expect(failed.tags).toMatchObject({ 'spool.call.exit_code': 3, 'spool.call.position': 3, error: true });

    const child = only(spans, 'child work');
    expect(child.parent).toBe(step.spanID);
    expect(child.service).toBe('step-program');
  });

  it('given an activity that fails its first attempt and passes its second, then each attempt is a span under the run with its exit code, and the call waiting for it a span in each pass', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'act.sh': `spool activity run probe --requires shell --attempts 2 --backoff 1s -- sh -c 'test -f tried || { touch tried; exit 5; }'\n`,
    });
    const { code, output } = await spool(['run', 'act.sh', '--data-dir', join(dir, 'data')], { cwd: dir, env: otel() });
    expect(code, output).toBe(0);
    const spans = await spansOf(runTraceId(runIdOf(output)), 7);
    const run = only(spans, 'run act.sh');
    const attempts = spans.filter((span) => span.operationName.startsWith('activity probe attempt')).sort((a, b) => a.startTime - b.startTime);
    expect(attempts.map((span) => [span.operationName, span.parent, span.tags['spool.call.exit_code']])).toEqual([
      ['activity probe attempt 1', run.spanID, 5],
      ['activity probe attempt 2', run.spanID, 0],
    ]);
    const [first, second] = ['pass 1', 'pass 2'].map((name) => only(spans, name, run));
    expect(only(spans, 'activity.run probe', first).tags).toMatchObject({ 'spool.call.outcome': 'suspended', 'spool.awaiting': 'activity probe' });
    expect(only(spans, 'activity.run probe', second).tags).toMatchObject({ 'spool.call.exit_code': 0, 'spool.call.resumed': true });
  });

  it("given a graph with an http node, then the node is a span under its pass, as the journal records it ('step_fn node <id>')", async () => {
    const dir = tempDir();
    writeFiles(dir, { 'g.yaml': `nodes:\n  - id: fetch\n    type: http\n    config: { url: "${jaeger.queryUrl}/api/services" }\n` });
    const { code, output } = await spool(['run', 'g.yaml', '--data-dir', join(dir, 'data')], { cwd: dir, env: otel() });
    expect(code, output).toBe(0);
    const spans = await spansOf(runTraceId(runIdOf(output)), 3);
    const pass = only(spans, 'pass 1', only(spans, 'run g.yaml'));
    expect(only(spans, 'step_fn node fetch', pass).tags).toMatchObject({ 'spool.call.verb': 'step_fn', 'spool.call.outcome': 'ok' });
  });

  it('given an endpoint nothing listens on, then the run ends as it would have, and one line says the traces could not be sent', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'fails.sh': `spool step charge -- sh -c 'exit 4'\n` });
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const { code, output } = await spool(['run', 'fails.sh', '--data-dir', join(dir, 'data')], { cwd: dir, env: { ...otel(), OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    // As without tracing: a failed run's spool run exits 1, and says how it failed.
    expect(code).toBe(1);
    expect(output).toContain('failed: script exited 4');
    const said = output.split('\n').filter((line) => line.includes('traces'));
    expect(said).toEqual([`spool: traces could not be sent to ${endpoint}: ECONNREFUSED`]);
    expect(output).not.toContain('errno');
  });

  it('given OTEL_SDK_DISABLED=true beside an endpoint, or no OTEL_* at all, then nothing is sent and no OpenTelemetry module is loaded', async () => {
    const dir = tempDir();
    // Every module the CLI resolves, from a loader hook (module.register), as the process loads it.
    writeFiles(dir, {
      'loads.mjs': `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
      'hooks.mjs': `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(join(dir, 'loaded.txt'))}, resolved.url + '\\n');
  return resolved;
}
`,
      'child.mjs': CHILD,
      'plain.sh': `spool step instrumented -- node child.mjs || echo "step exited $?"\n`,
    });
    const loads = { NODE_OPTIONS: `--import ${join(dir, 'loads.mjs')}` };
    for (const env of [{ ...otel(), OTEL_SDK_DISABLED: 'true' }, { OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined }]) {
      const { code, output } = await spool(['run', 'plain.sh', '--data-dir', join(dir, 'data')], { cwd: dir, env: { ...env, ...loads } });
      expect(code).toBe(0);
      // The step got no TRACEPARENT, so its program said so and sent nothing.
      expect(output).toContain('no TRACEPARENT');
      expect(output).toContain('step exited 1');
      const loaded = (await import('node:fs')).readFileSync(join(dir, 'loaded.txt'), 'utf8');
      expect(loaded).toContain('/dist/cli/main.js');
      expect(loaded).not.toContain('@opentelemetry');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await jaeger.spans(runTraceId(runIdOf(output)))).toEqual([]);
    }
  });
});

describe('tracing with spool test', () => {
  it('given OTEL_* pointing at jaeger, then spool test, whose clock is virtual, sends no span', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'nap.sh': `spool sleep 14d\nspool step after -- echo woke\n`,
      'nap.test.yaml': `- name: a fortnight's sleep\n  expect:\n    steps: [after]\n`,
    });
    const { code, output } = await spool(['test', 'nap.sh'], { cwd: dir, env: otel('spool-test-probe') });
    expect(output).toContain('1 passed');
    expect(code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await jaeger.find('spool-test-probe', 'pass 1')).toEqual([]);
  });
});

describe('tracing with spool dev', () => {
  let dev: DevProcess;
  const dir = (): string => tempDir();

  beforeAll(async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: '100' });
    delete process.env.OTEL_SERVICE_NAME;
    dev = await startDevProcess(join(tempDir(), 'data'), await freePort()).finally(() => (process.env = saved));
  }, 120_000);

  afterAll(async () => {
    dev?.child.kill('SIGTERM');
    await dev?.exited;
  });

  it('given a run that waits for a signal sent later, then its two passes arrive from spool-dev under the run, the wait in both', async () => {
    const cwd = dir();
    writeFiles(cwd, {
      'child.mjs': CHILD,
      'gate.sh': `spool step instrumented -- node ${join(cwd, 'child.mjs')}\nspool wait signal go\nspool step after -- echo done\n`,
    });
    const runId = await submit(dev.url, cwd, 'gate.sh');
    await poll('the run to wait for its signal', async () => (await getRun(dev.url, runId)).awaiting === 'signal go');
    await cliOk(dev.url, cwd, ['signal', runId, 'go']);
    expect((await waitForRun(dev.url, runId)).status).toBe('succeeded');

    const spans = await spansOf(runTraceId(runId), 8);
    const run = only(spans, 'run gate.sh');
    expect(run.service).toBe('spool-dev');
    const [first, second] = ['pass 1', 'pass 2'].map((name) => only(spans, name, run));
    expect(first!.startTime).toBeLessThan(second!.startTime);
    const step = only(spans, 'step instrumented', first);
    expect(only(spans, 'wait.signal go', first).tags).toMatchObject({ 'spool.call.outcome': 'suspended' });
    expect(only(spans, 'wait.signal go', second).tags).toMatchObject({ 'spool.call.outcome': 'ok', 'spool.call.resumed': true });
    expect(only(spans, 'step after', second).tags).toMatchObject({ 'spool.call.exit_code': 0 });
    expect(only(spans, 'child work').parent).toBe(step.spanID);
  });

  it('given a run cancelled while its step runs, then the step ends unfinished with its pass, and the pass and the run say cancelled', async () => {
    const cwd = dir();
    writeFiles(cwd, { 'long.sh': `spool step long -- sh -c 'echo started; sleep 60'\n` });
    const runId = await submit(dev.url, cwd, 'long.sh');
    await waitForLog(dev.url, runId, 'started');
    await cliOk(dev.url, cwd, ['cancel', runId]);
    expect((await waitForRun(dev.url, runId)).status).toBe('cancelled');

    const spans = await spansOf(runTraceId(runId), 3);
    const run = only(spans, 'run long.sh');
    expect(run.tags).toMatchObject({ 'spool.run.status': 'cancelled', error: true });
    const pass = only(spans, 'pass 1', run);
    expect(pass.tags).toMatchObject({ 'spool.pass.outcome': 'cancelled' });
    expect(only(spans, 'step long', pass).tags).toMatchObject({ 'spool.call.outcome': 'unfinished' });
  });
});
