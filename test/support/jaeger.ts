import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './dev.js';

/** A real Jaeger (hack/build-jaeger.sh) on loopback: OTLP over HTTP in, its query API out. */
export interface TestJaeger {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  otlpEndpoint: string;
  /** Jaeger's query API (and UI). */
  queryUrl: string;
  /** The trace's spans as Jaeger's query API answers them, [] while it has none. */
  spans(traceId: string): Promise<JaegerSpan[]>;
  /** The spans of this name a service sent, in any trace. */
  find(service: string, operation: string): Promise<JaegerSpan[]>;
  stop(): Promise<void>;
}

export interface JaegerSpan {
  spanID: string;
  operationName: string;
  /** The parent, as Jaeger names it: a CHILD_OF reference. */
  parent: string | null;
  /** Microseconds since the epoch. */
  startTime: number;
  service: string;
  tags: Record<string, unknown>;
}

interface RawTrace {
  spans: { spanID: string; operationName: string; references?: { refType: string; spanID: string }[]; startTime: number; processID: string; tags: { key: string; value: unknown }[] }[];
  processes: Record<string, { serviceName: string }>;
}

const repo = resolve(import.meta.dirname, '..', '..');

function spansOf(trace: RawTrace): JaegerSpan[] {
  return trace.spans.map((span) => ({
    spanID: span.spanID,
    operationName: span.operationName,
    parent: span.references?.find((reference) => reference.refType === 'CHILD_OF')?.spanID ?? null,
    startTime: span.startTime,
    service: trace.processes[span.processID]?.serviceName ?? '',
    tags: Object.fromEntries(span.tags.map((tag) => [tag.key, tag.value])),
  }));
}

/** Jaeger v2's all-in-one, cut to what the tests use, on ports of its own (the defaults may be taken). */
function config(otlp: number, query: number, health: number): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${query}
    grpc:
      endpoint: 127.0.0.1:0
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${health}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

export async function startJaeger(): Promise<TestJaeger> {
  const binary = execFileSync('bash', [join(repo, 'hack', 'build-jaeger.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'spool-jaeger-'));
  const [otlp, query, health] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'config.yaml'), config(otlp, query, health));
  const log = join(dir, 'jaeger.log');
  const fd = openSync(log, 'w');
  const child = spawn(binary, ['--config', join(dir, 'config.yaml')], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  const gone = new Promise<void>((done) => child.once('exit', () => ((exited = true), done())));
  const queryUrl = `http://127.0.0.1:${query}`;
  for (const deadline = Date.now() + 60_000; ; ) {
    if (exited) throw new Error(`jaeger exited before it was ready:\n${readFileSync(log, 'utf8')}`);
    const ready = await fetch(`${queryUrl}/api/services`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`jaeger did not answer on ${queryUrl}:\n${readFileSync(log, 'utf8')}`);
    await new Promise((done) => setTimeout(done, 200));
  }
  return {
    otlpEndpoint: `http://127.0.0.1:${otlp}`,
    queryUrl,
    async spans(traceId) {
      const response = await fetch(`${queryUrl}/api/traces/${traceId}`);
      if (response.status === 404) return [];
      if (!response.ok) throw new Error(`jaeger answered ${response.status}: ${await response.text()}`);
      const [trace] = ((await response.json()) as { data: RawTrace[] }).data;
      return trace ? spansOf(trace) : [];
    },
    async find(service, operation) {
      const query = new URLSearchParams({ service, operation, limit: '1000', lookback: '1h' });
      const response = await fetch(`${queryUrl}/api/traces?${query}`);
      if (!response.ok) throw new Error(`jaeger answered ${response.status}: ${await response.text()}`);
      const traces = ((await response.json()) as { data: RawTrace[] | null }).data ?? [];
      return traces.flatMap(spansOf).filter((span) => span.operationName === operation);
    },
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
