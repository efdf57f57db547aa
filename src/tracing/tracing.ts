import type { RunOutcome } from '../engine/settle.js';
import type { RunRecord } from '../store/types.js';

// OpenTelemetry traces (docs/tracing.md), off unless the standard OTEL_* variables point at a
// receiver. This module is all the rest of the program imports: the OTel SDK (./otel-tracing.ts)
// is loaded only once tracing is configured, so `spool run`'s start-up does not pay for it.

/** One durable call's span, open while its command runs (a step told to execute). */
export interface CallSpan {
  /** The W3C traceparent naming this span, for the step command's environment. */
  readonly traceparent: string;
  end(fields: CallEnd): void;
}

export interface CallStart {
  verb: string;
  name: string;
  position: number;
  /** The call was recorded by an earlier pass and this pass finishes it (a wait that ends now). */
  resumed: boolean;
  start: Date;
}

export interface CallEnd {
  outcome: 'ok' | 'suspended' | 'error' | 'unfinished';
  exitCode?: number;
  /** What a suspended call waits for, or an error's message. */
  detail?: string;
}

/** The spans of one pass: its own, and those of the calls it makes. */
export interface PassTrace {
  call(start: CallStart): CallSpan;
  /** A call answered from the journal: counted on the pass's span, not a span of its own. */
  replayed(): void;
}

export interface Tracing {
  /** The pass's trace, made on first asking: the executor opens it, the pass's calls join it. */
  pass(run: RunRecord): PassTrace;
  /** Ends a pass's span with what it came to, and the run's own span when the run ended. */
  endPass(run: RunRecord, outcome: RunOutcome, finished: Date): void;
  activityAttempt(runId: string, name: string, attempt: number, start: Date, end: CallEnd): void;
  reconcile<T>(kind: string, namespace: string, name: string, work: () => Promise<T>): Promise<T>;
  /** Sends the spans not sent yet (before a short-lived process such as `spool run` exits). */
  flush(): Promise<void>;
}

/**
 * Whether traces are wanted: an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_TRACES_EXPORTER is not `none` and OTEL_SDK_DISABLED
 * is not `true`, as the OTel specification has these variables mean.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase());
  if (exporters.includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

let serviceName = 'spool';
let loading: Promise<Tracing> | null = null;
let switchedOff = false;

/**
 * No spans from this process whatever OTEL_* says: `spool test` runs passes on a virtual clock,
 * and spans of days that took a second would only mislead.
 */
export function switchTracingOff(): void {
  switchedOff = true;
}

/** This process's name in its spans unless OTEL_SERVICE_NAME gives one (`spool-dev`, `hyperspool-operator`). */
export function setTracingService(name: string): void {
  serviceName = name;
}

/** This process's tracing, or null when it is off (nothing of OTel is loaded then). */
export function tracing(): Promise<Tracing | null> {
  if (switchedOff || !tracingConfigured()) return Promise.resolve(null);
  loading ??= import('./otel-tracing.js').then(({ startTracing }) => startTracing(process.env.OTEL_SERVICE_NAME?.trim() || serviceName));
  return loading;
}

/**
 * Sends what is left to send (an export gives up after 2 s: otel-tracing.ts); nothing when tracing
 * never started. Never throws: spans that cannot be sent are said in one line (`say`), and the
 * command ends as it would have.
 */
export async function flushTracing(say: (line: string) => void = (line) => void process.stderr.write(`spool: ${line}\n`)): Promise<void> {
  if (!loading) return;
  const failure = await (await loading).flush().then(() => null, reasonOf);
  const endpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (failure) say(`traces could not be sent to ${endpoint ?? 'the OTLP endpoint'}: ${failure}`);
}

/** An exporter's failure in a few words (it may reject with a list of errors): their codes, else a message's first line. */
function reasonOf(error: unknown): string {
  const first = (Array.isArray(error) ? error[0] : error) as { code?: unknown; message?: unknown } | undefined;
  if (typeof first?.code === 'string') return first.code;
  return String(first?.message ?? first ?? 'unknown error').split('\n')[0] ?? '';
}

/**
 * The OTEL_* variables a pass pod's script gets from the operator, when tracing is on: a step
 * that traces itself sends its spans where the operator sends its own. Not OTEL_SERVICE_NAME:
 * a step's spans are the step's program's, not the operator's.
 */
export function scriptOtelVariables(env: NodeJS.ProcessEnv = process.env): { name: string; value: string }[] {
  if (!tracingConfigured(env)) return [];
  return Object.entries(env)
    .filter((entry): entry is [string, string] => entry[0].startsWith('OTEL_') && entry[0] !== 'OTEL_SERVICE_NAME' && entry[1] !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => ({ name, value }));
}
