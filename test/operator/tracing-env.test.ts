import { describe, expect, it } from 'vitest';
import { buildPassJob } from '../../src/operator/passes/job-builder.js';
import type { RunRecord } from '../../src/store/types.js';
import { scriptOtelVariables, tracingConfigured } from '../../src/tracing/tracing.js';

// When tracing is on (docs/tracing.md), and what of it a pass pod's script gets from the operator.

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' };

describe('tracingConfigured', () => {
  it.each([
    ['no OTEL_* at all', {}, false],
    ['an endpoint', ENDPOINT, true],
    ['a traces endpoint', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://jaeger:4318/v1/traces' }, true],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    ['an endpoint and OTEL_SDK_DISABLED=true', { ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }, false],
    ['an endpoint and OTEL_SDK_DISABLED=false', { ...ENDPOINT, OTEL_SDK_DISABLED: 'false' }, true],
    ['an endpoint and OTEL_TRACES_EXPORTER=none', { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }, false],
    ['an endpoint and OTEL_TRACES_EXPORTER=otlp', { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'otlp' }, true],
  ])('given %s, then tracing is %s', (_, env, on) => {
    expect(tracingConfigured(env)).toBe(on);
  });
});

describe("a pass pod's script and the operator's OTEL_* variables", () => {
  const run = { id: 'team-a:team-a:run-0123456789abcdef', project: 'team-a', passes: 2, workflow: 'w.sh', runner: { env: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://mine:4318' }] } } as unknown as RunRecord;
  const settings = { runnerImage: 'hyperspool:dev', serverUrl: 'http://operator:7456', ttlSecondsAfterFinished: 600 };
  const scriptEnv = (env: NodeJS.ProcessEnv) =>
    buildPassJob(run, { name: 'r', uid: 'u' }, { ...settings, scriptEnv: scriptOtelVariables(env) }).spec!.template.spec!.containers[0]!.env;

  it("given tracing on, then the script gets them before its Workflow's own (which win), without the operator's service name", () => {
    const env = scriptEnv({ ...ENDPOINT, OTEL_SERVICE_NAME: 'hyperspool-operator', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=1', PATH: '/bin' });
    expect(env).toEqual([
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://jaeger:4318' },
      { name: 'OTEL_EXPORTER_OTLP_HEADERS', value: 'x-key=1' },
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://mine:4318' },
    ]);
  });

  it('given tracing off, then the script gets none of them', () => {
    expect(scriptEnv({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true', OTEL_SERVICE_NAME: 'x' })).toEqual([{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://mine:4318' }]);
  });
});
