import { SpoolError } from '../common/errors.js';
import type { RunSearch, RunSort } from './types.js';

/**
 * The runs list's search, order and page cursor as SQL over `runs`, shared by a page of runs and
 * the counts per status, so both find the same runs.
 */

/**
 * The search's conditions, with its parameters from `$1`. The text is looked for with strpos on
 * lower() of both sides, so `%` and `_` in it are plain characters; it is not an indexed search
 * (a page of it stops at the page's size, the counts read every run of the project). The journal
 * is read per run through its primary key: `offset 0` keeps the planner from hashing the whole
 * journal's labels instead, which reads every entry however soon the page is full.
 */
export function runSearchWhere(search: RunSearch): { where: string; params: unknown[] } {
  const found = (column: string): string => `strpos(lower(${column}), lower($7)) > 0`;
  const where = `($1::text is null or project = $1)
      and ($2::text is null or workflow = $2)
      and ($3::text is null or subject = $3)
      and ($4::text is null or parent_id = $4)
      and (not $5::boolean or parent_id is null)
      and ($6::timestamptz is null or created_at >= $6)
      and ($8::timestamptz is null or created_at < $8)
      and ($7::text is null
        or ${found('id')} or ${found('workflow')} or ${found("coalesce(subject, '')")}
        or ${found("coalesce(input::text, '')")} or ${found('outputs::text')}
        or exists (select 1 from journal j where j.run_id = runs.id and j.kind = 'call'
                     and ${found("coalesce(j.data->>'label', j.data->>'text', '')")} offset 0))`;
  return {
    where,
    params: [
      search.project ?? null,
      search.workflow ?? null,
      search.subject ?? null,
      search.parentId ?? null,
      search.rootsOnly === true,
      search.since ?? null,
      search.text ?? null,
      search.until ?? null,
    ],
  };
}

/**
 * Each order's key, and how the key is read back into a cursor and compared with one. A key ties
 * by id, so a page never repeats or skips a run. Duration: a run still going sorts as the longest.
 */
const KEYS: Record<'created' | 'updated' | 'duration', { key: string; type: string }> = {
  created: { key: 'created_at', type: 'timestamptz' },
  updated: { key: 'updated_at', type: 'timestamptz' },
  duration: { key: `coalesce(extract(epoch from finished_at - created_at)::float8, 'Infinity'::float8)`, type: 'float8' },
};

/** The order by, the cursor's condition (params at `$at` and `$at+1`) and the key as text to put in the next cursor. */
export function runOrder(sort: RunSort, at: number): { orderBy: string; after: string; keyText: string } {
  const descending = sort.startsWith('-');
  const { key, type } = KEYS[sort.replace('-', '') as keyof typeof KEYS];
  const direction = descending ? 'desc' : 'asc';
  return {
    orderBy: `${key} ${direction}, id ${direction}`,
    after: `($${at}::text is null or (${key}, id) ${descending ? '<' : '>'} ($${at}::${type}, $${at + 1}::text))`,
    keyText: `(${key})::text`,
  };
}

/** A page cursor: the sort, the last run's key (exact, as the database prints it) and its id. */
export function encodeCursor(sort: RunSort, key: string, id: string): string {
  return Buffer.from(JSON.stringify([sort, key, id])).toString('base64url');
}

/** The key and id a cursor holds; one of another sort, or none this server made, is a usage error. */
export function decodeCursor(cursor: string, sort: RunSort): [string, string] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = null;
  }
  // A cursor of before sorts existed: [created_at, id], newest first.
  if (Array.isArray(value) && value.length === 2) value = ['-created', ...(value as unknown[])];
  if (Array.isArray(value) && value.length === 3 && value.every((part) => typeof part === 'string')) {
    const [of, key, id] = value as [string, string, string];
    if (of !== sort) throw new SpoolError('usage', `'before' is a cursor of the order '${of}', not '${sort}': start again from the first page`);
    const valid = sort.endsWith('duration') ? key === 'Infinity' || Number.isFinite(Number(key)) : !Number.isNaN(Date.parse(key));
    if (valid && key !== '') return [key, id];
  }
  throw new SpoolError('usage', `'before' is not a page cursor this server handed out: '${cursor}'`);
}
