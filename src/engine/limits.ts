import { SpoolError, UsageError } from '../common/errors.js';
import type { Request } from './protocol.js';

/**
 * How big a recorded value may be: a step's or an activity's output, a step_fn's value, a state
 * cell, an output, an annotation, an event's or a signal's payload, a run's input. One limit
 * (docs/limits.md), set by SPOOL_MAX_RESULT_BYTES or --max-result-bytes: the journal and the
 * store hold small facts, and a big one belongs in a file whose path or id is recorded instead.
 */
export const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;

/** The limit this process uses: SPOOL_MAX_RESULT_BYTES when set (a whole number of bytes), else 1 MiB. */
export function maxValueBytes(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.SPOOL_MAX_RESULT_BYTES;
  if (text === undefined || text === '') return DEFAULT_MAX_VALUE_BYTES;
  if (!/^\d+$/.test(text)) throw new UsageError(`SPOOL_MAX_RESULT_BYTES takes a number of bytes, not '${text}'`);
  return Number(text);
}

/** A command's output (a step, a locked section, an activity) over the limit. */
export function checkResultSize(what: string, text: string | Uint8Array, limit: number): void {
  const size = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
  if (size > limit) {
    throw new SpoolError(
      'limit',
      `${what} printed ${size} bytes, over the ${limit}-byte limit for a recorded result; ` +
        `write the output to a file and record its path or an id instead`,
    );
  }
}

/** Any other value over the limit; `what` names it as the person wrote it ('state set value'). */
export function checkValueSize(what: string, value: unknown, limit: number): void {
  if (value === undefined || value === null) return;
  const size = Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value));
  if (size > limit) {
    throw new SpoolError(
      'limit',
      `${what} is ${size} bytes, over the ${limit}-byte limit for a recorded value; ` +
        `keep it in a file or a store of its own and record its path or an id instead`,
    );
  }
}

/** The values a request would record, checked before anything is: a refused call takes no position. */
export function checkRequestValues(request: Request, limit: number): void {
  switch (request.verb) {
    case 'state.set':
    case 'state.add':
    case 'state.cas':
      return checkValueSize(`${request.verb.replace('.', ' ')} value`, request.value, limit);
    case 'output.set':
      return checkValueSize(`output '${request.key}'`, request.value, limit);
    case 'annotate':
      return checkValueSize('the annotation', request.text, limit);
    case 'event.emit':
      return checkValueSize(`event '${request.type}' payload`, request.payload, limit);
    case 'spawn':
    case 'call':
      checkValueSize(`${request.verb} ${request.workflow}: the script`, request.script, limit);
      return checkValueSize(`${request.verb} ${request.workflow}: the input`, request.input, limit);
    default:
      return;
  }
}

/**
 * How big artifacts may be (docs/artifacts.md): one artifact, and all of one run's together. Set
 * by SPOOL_MAX_ARTIFACT_BYTES and SPOOL_MAX_RUN_ARTIFACT_BYTES (on the runner, the dev server or
 * the operator): the default backend keeps them in PostgreSQL, which is not a bulk file store.
 */
export const DEFAULT_MAX_ARTIFACT_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MAX_RUN_ARTIFACT_BYTES = 4 * 1024 * 1024 * 1024;

export interface ArtifactLimits {
  artifactBytes: number;
  runBytes: number;
}

function bytesSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new UsageError(`${name} takes a number of bytes, not '${text}'`);
  return Number(text);
}

export function artifactLimits(env: NodeJS.ProcessEnv = process.env): ArtifactLimits {
  return {
    artifactBytes: bytesSetting(env, 'SPOOL_MAX_ARTIFACT_BYTES', DEFAULT_MAX_ARTIFACT_BYTES),
    runBytes: bytesSetting(env, 'SPOOL_MAX_RUN_ARTIFACT_BYTES', DEFAULT_MAX_RUN_ARTIFACT_BYTES),
  };
}

/** An artifact that would pass either limit: refused before its bytes are kept. */
export function checkArtifactSize(name: string, size: number, runTotal: number, limits: ArtifactLimits): void {
  if (size > limits.artifactBytes) {
    throw new SpoolError(
      'limit',
      `artifact '${name}' is over the ${limits.artifactBytes}-byte limit for one artifact (SPOOL_MAX_ARTIFACT_BYTES); ` +
        `nothing was stored`,
    );
  }
  if (runTotal + size > limits.runBytes) {
    throw new SpoolError(
      'limit',
      `artifact '${name}' would bring this run's artifacts to ${runTotal + size} bytes, over the ${limits.runBytes}-byte ` +
        `limit for a run (SPOOL_MAX_RUN_ARTIFACT_BYTES); nothing was stored`,
    );
  }
}

/**
 * How big the files bundled by `--with DIR` may be together (docs/artifacts.md#checkout): a
 * checkout is a script's helpers and config, not its data. SPOOL_MAX_CHECKOUT_BYTES sets it.
 */
export const DEFAULT_MAX_CHECKOUT_BYTES = 64 * 1024 * 1024;

export function maxCheckoutBytes(env: NodeJS.ProcessEnv = process.env): number {
  return bytesSetting(env, 'SPOOL_MAX_CHECKOUT_BYTES', DEFAULT_MAX_CHECKOUT_BYTES);
}
