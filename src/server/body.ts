import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { ScriptSource } from '../store/types.js';
import { badRequest } from './http-error.js';

type Body = Record<string, unknown>;

export function object(value: unknown): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('the request body must be a JSON object');
  return value as Body;
}

export function text(body: Body, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') throw badRequest(`'${field}' is required and must be a non-empty string`);
  return value;
}

export function optionalText(body: Body, field: string): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badRequest(`'${field}' must be a string`);
  return value;
}

export function optionalNumber(body: Body, field: string, min: number): number | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) throw badRequest(`'${field}' must be a number of at least ${min}`);
  return value;
}

/** A script a run, handler or schedule runs: its name, interpreter, text and submit directory. */
export function scriptSource(body: Body): ScriptSource {
  return {
    workflow: text(body, 'workflow'),
    interpreter: text(body, 'interpreter'),
    script: typeof body.script === 'string' ? body.script : (() => { throw badRequest(`'script' is required and must be a string`); })(),
    cwd: existingDirectory(optionalText(body, 'cwd')),
  };
}

/**
 * The directory a script runs in, as the CLI sends it (where the person submitted from): an
 * absolute path to a directory that exists. The server never makes one a client names.
 */
function existingDirectory(cwd: string | null): string | null {
  if (cwd === null) return null;
  let ok = false;
  try {
    ok = isAbsolute(cwd) && statSync(cwd).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw badRequest(`'cwd' must be an existing directory, as an absolute path, not '${cwd}'`);
  return cwd;
}

/** A whole-number query parameter within bounds, or its default; anything else is a 400 naming it. */
export function queryInteger(query: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw badRequest(`'${name}' must be a whole number from ${min} to ${max}, not '${String(raw)}'`);
  return value;
}

/**
 * A time in the query (its form checked by the route's schema, src/api/requests.ts), or undefined
 * when absent; a date the calendar has not (`2026-02-30`, `T24:00`) is refused rather than rolled over.
 */
export function queryTime(query: Record<string, unknown>, name: string): Date | undefined {
  const raw = query[name];
  if (typeof raw !== 'string') return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0'] = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(raw) ?? [];
  const date = new Date(raw.length === 10 ? `${raw}T00:00:00Z` : raw);
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const real = calendar.getUTCDate() === Number(day) && calendar.getUTCMonth() === Number(month) - 1 && Number(hour) < 24 && Number(minute) < 60 && Number(second) < 60;
  if (!real || Number.isNaN(date.getTime())) throw badRequest(`'${name}' must be a real time, ISO 8601 (2026-12-06T08:00:00Z or 2026-12-06), not '${raw}'`);
  return date;
}
