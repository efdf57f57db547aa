import { RUN_SORTS } from '../../api/responses.js';
import { parseDuration } from '../../common/duration.js';
import { UsageError } from '../../common/errors.js';

/**
 * `spool runs --search --since --until --sort` as the runs list's query (docs/api.md, Finding runs).
 * A time may be a duration back from now (`--since 2h`), as `kubectl logs --since` takes, or an
 * ISO 8601 time the server checks; a bad one is refused here in one line, before anything is sent.
 */
export interface RunsSearchOptions {
  search?: string;
  since?: string;
  until?: string;
  sort?: string;
}

/** The query parameters for these options (none given: an empty list). */
export function runsSearchQuery(options: RunsSearchOptions, now = new Date()): [string, string][] {
  const query: [string, string][] = [];
  if (options.search !== undefined) {
    if (options.search === '' || /[\x00-\x1f\x7f]/.test(options.search)) throw new UsageError('--search takes text of one line, not empty');
    if (options.search.length > 200) throw new UsageError('--search takes at most 200 characters');
    query.push(['q', options.search]);
  }
  for (const name of ['since', 'until'] as const) {
    const value = options[name];
    if (value !== undefined) query.push([name, timeOf(`--${name}`, value, now)]);
  }
  if (options.sort !== undefined) {
    if (!(RUN_SORTS as readonly string[]).includes(options.sort)) throw new UsageError(`--sort takes ${RUN_SORTS.join(', ')}, not '${options.sort}'`);
    query.push(['sort', options.sort]);
  }
  return query;
}

function timeOf(flag: string, value: string, now: Date): string {
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) return value;
  try {
    return new Date(now.getTime() - parseDuration(value)).toISOString();
  } catch {
    throw new UsageError(`${flag} takes a duration back from now (30m, 2h, 7d) or an ISO 8601 time (2026-12-06T08:00:00Z), not '${value}'`);
  }
}
