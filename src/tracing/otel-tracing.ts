import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import type { RunOutcome } from '../engine/settle.js';
import type { RunRecord } from '../store/types.js';
import { passSpanId, runSpanId, runTraceId } from './trace-ids.js';
import type { CallEnd, CallSpan, CallStart, PassTrace, Tracing } from './tracing.js';

// Loaded only when tracing is configured (tracing.ts). The exporter, the batch processor and the
// resource read the standard OTEL_* variables themselves (endpoint, headers, OTEL_BSP_*,
// OTEL_RESOURCE_ATTRIBUTES); spans go out as OTLP over HTTP.

/**
 * Random ids, except for the spans whose ids are derived from their run (trace-ids.ts): the SDK
 * asks its generator for every id, so a derived one is handed to it for the next span only.
 */
class DerivedIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private nextTraceId: string | null = null;
  private nextSpanId: string | null = null;

  /** The ids of the span started next (startSpan is synchronous, so no other span takes them). */
  choose(traceId: string | null, spanId: string): void {
    this.nextTraceId = traceId;
    this.nextSpanId = spanId;
  }

  generateTraceId(): string {
    const id = this.nextTraceId ?? this.random.generateTraceId();
    this.nextTraceId = null;
    return id;
  }

  generateSpanId(): string {
    const id = this.nextSpanId ?? this.random.generateSpanId();
    this.nextSpanId = null;
    return id;
  }
}

/** A context whose span is one not held here: a span of the run sent by another process, or not yet. */
function parent(traceId: string, spanId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

function endWith(span: Span, end: CallEnd, at?: Date): void {
  span.setAttribute('spool.call.outcome', end.outcome);
  if (end.exitCode !== undefined) span.setAttribute('spool.call.exit_code', end.exitCode);
  if (end.outcome === 'suspended') {
    if (end.detail) span.setAttribute('spool.awaiting', end.detail);
    span.addEvent('suspended', end.detail ? { 'spool.awaiting': end.detail } : {}, at);
  }
  const failed = end.outcome === 'error' || (end.exitCode !== undefined && end.exitCode !== 0);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, ...(end.detail && end.outcome === 'error' ? { message: end.detail } : {}) });
  span.end(at);
}

class OtelPassTrace implements PassTrace {
  readonly span: Span;
  private readonly open = new Set<Span>();
  private replays = 0;

  constructor(
    private readonly tracer: Tracer,
    private readonly ids: DerivedIds,
    private readonly run: RunRecord,
  ) {
    const traceId = runTraceId(run.id);
    ids.choose(null, passSpanId(run.id, run.passes));
    this.span = tracer.startSpan(
      `pass ${run.passes}`,
      { attributes: { 'spool.run.id': run.id, 'spool.pass': run.passes, 'spool.workflow': run.workflow } },
      parent(traceId, runSpanId(run.id)),
    );
  }

  call(start: CallStart): CallSpan {
    const { traceId, spanId } = this.span.spanContext();
    const attributes: Attributes = {
      'spool.run.id': this.run.id,
      'spool.call.verb': start.verb,
      'spool.call.name': start.name,
      'spool.call.position': start.position,
      'spool.call.resumed': start.resumed,
    };
    const span = this.tracer.startSpan(start.name ? `${start.verb} ${start.name}` : start.verb, { attributes, startTime: start.start }, parent(traceId, spanId));
    this.open.add(span);
    const context = span.spanContext();
    return {
      traceparent: `00-${context.traceId}-${context.spanId}-0${context.traceFlags & TraceFlags.SAMPLED}`,
      end: (end) => {
        if (!this.open.delete(span)) return;
        endWith(span, end);
      },
    };
  }

  replayed(): void {
    this.replays += 1;
  }

  end(outcome: RunOutcome, finished: Date): void {
    // A call still open when its pass ends (the script was killed in a step) ends with it.
    for (const span of this.open) endWith(span, { outcome: 'unfinished' }, finished);
    this.open.clear();
    this.span.setAttributes({ 'spool.pass.outcome': outcome.kind, 'spool.pass.replayed_calls': this.replays });
    if (outcome.kind === 'suspended') this.span.setAttribute('spool.awaiting', outcome.suspension.awaiting);
    if (outcome.kind === 'failed' || outcome.kind === 'lost') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    this.span.end(finished);
  }
}

class OtelTracing implements Tracing {
  private readonly passes = new Map<string, OtelPassTrace>();

  constructor(
    private readonly provider: BasicTracerProvider,
    private readonly tracer: Tracer,
    private readonly ids: DerivedIds,
  ) {}

  pass(run: RunRecord): OtelPassTrace {
    const key = `${run.id}#${run.passes}`;
    let pass = this.passes.get(key);
    if (!pass) {
      pass = new OtelPassTrace(this.tracer, this.ids, run);
      this.passes.set(key, pass);
    }
    return pass;
  }

  endPass(run: RunRecord, outcome: RunOutcome, finished: Date): void {
    this.pass(run).end(outcome, finished);
    this.passes.delete(`${run.id}#${run.passes}`);
    if (outcome.kind === 'suspended' || outcome.kind === 'lost') return;
    // The run ended: its own span, from its creation, the parent every pass named.
    this.ids.choose(runTraceId(run.id), runSpanId(run.id));
    const span = this.tracer.startSpan(
      `run ${run.workflow}`,
      { root: true, startTime: run.createdAt, attributes: { 'spool.run.id': run.id, 'spool.workflow': run.workflow, 'spool.run.status': outcome.kind, 'spool.run.passes': run.passes } },
    );
    if (outcome.kind !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    span.end(finished);
  }

  activityAttempt(runId: string, name: string, attempt: number, start: Date, end: CallEnd): void {
    const attributes = { 'spool.run.id': runId, 'spool.activity.name': name, 'spool.activity.attempt': attempt };
    const span = this.tracer.startSpan(`activity ${name} attempt ${attempt}`, { attributes, startTime: start }, parent(runTraceId(runId), runSpanId(runId)));
    endWith(span, end);
  }

  async reconcile<T>(kind: string, namespace: string, name: string, work: () => Promise<T>): Promise<T> {
    const span = this.tracer.startSpan(`reconcile ${kind}`, { root: true, attributes: { 'k8s.namespace.name': namespace, 'hyperspool.kind': kind, 'hyperspool.name': name } });
    try {
      const result = await work();
      span.end();
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      span.end();
      throw error;
    }
  }

  flush(): Promise<void> {
    return this.provider.forceFlush();
  }
}

const EXPORT_TIMEOUT_MS = 2000;

export async function startTracing(serviceName: string): Promise<Tracing> {
  const detected = detectResources({ detectors: [envDetector] });
  await detected.waitForAsyncAttributes?.();
  // OTEL_RESOURCE_ATTRIBUTES may name the service too; OTEL_SERVICE_NAME, or ours, wins.
  const resource = defaultResource().merge(detected).merge(resourceFromAttributes({ 'service.name': serviceName }));
  const ids = new DerivedIds();
  // An export gives up after EXPORT_TIMEOUT_MS, retries included, unless OTEL_EXPORTER_OTLP_*TIMEOUT
  // says otherwise (the SDK's default is 10 s): `spool run` ends when its run has, and a receiver
  // that is away would otherwise hold it up that long.
  const timeoutSet = Boolean(process.env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?.trim() || process.env.OTEL_EXPORTER_OTLP_TIMEOUT?.trim());
  const exporter = new OTLPTraceExporter(timeoutSet ? {} : { timeoutMillis: EXPORT_TIMEOUT_MS });
  const provider = new BasicTracerProvider({ resource, idGenerator: ids, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return new OtelTracing(provider, provider.getTracer('hyperspool'), ids);
}
