import { ensureError } from './errors.js';

/** Values a log line carries beside its message; undefined fields are left out. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/**
 * Structured logs for a long-running process (the operator): one JSON object a line, so a log
 * pipeline (Loki, Cloud Logging, `kubectl logs | jq`) can filter by field. Each line has `time`,
 * `level` and `msg`; an object a line is about is named by `kind`, `namespace` and `name`.
 */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  error(msg: string, error: unknown, fields?: LogFields): void;
  /** A logger whose lines all carry `fields` too (the replica's name, say). */
  with(fields: LogFields): Logger;
}

/** Writes each line with `write` (stderr unless given), as klog's JSON format and zap do. */
export function jsonLogger(write: (line: string) => void = (line) => process.stderr.write(line), base: LogFields = {}): Logger {
  const emit = (level: 'info' | 'error', msg: string, fields: LogFields): void => {
    const line: Record<string, unknown> = { time: new Date().toISOString(), level, msg };
    for (const [key, value] of Object.entries({ ...base, ...fields })) if (value !== undefined) line[key] = value;
    write(`${JSON.stringify(line)}\n`);
  };
  return {
    info: (msg, fields = {}) => emit('info', msg, fields),
    error: (msg, error, fields = {}) => emit('error', msg, { ...fields, error: ensureError(error).message }),
    with: (fields) => jsonLogger(write, { ...base, ...fields }),
  };
}

