import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { PHASES, type ResponseOf, type RunSort } from '../api.js';
import { Link, navigate } from '../router.js';

/**
 * What the runs list shows, all of it in the address, so a link reproduces the view: phase,
 * workflow, subject, text to find, when the runs were created (the last hour, day or week, counted
 * from each time the list is read, or a custom range kept as UTC times), the order, and whether
 * runs started by other runs are in it.
 */
export interface Filters {
  status: string;
  workflow: string;
  subject: string;
  all: boolean;
  q: string;
  /** '', a span back from now, or 'custom' (since and until). */
  range: string;
  since: string;
  until: string;
  sort: RunSort;
}

const SPANS: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'last hour', ms: 3_600_000 },
  '1d': { label: 'last day', ms: 86_400_000 },
  '7d': { label: 'last week', ms: 7 * 86_400_000 },
};

const ORDERS: Record<RunSort, string> = {
  '-created': 'newest first',
  created: 'oldest first',
  '-updated': 'last changed',
  updated: 'least recently changed',
  '-duration': 'longest',
  duration: 'shortest',
};

export function filtersOf(query: URLSearchParams): Filters {
  const sort = query.get('sort') ?? '';
  const range = query.get('range') ?? '';
  return {
    status: query.get('status') ?? '',
    workflow: query.get('workflow') ?? '',
    subject: query.get('subject') ?? '',
    all: query.get('all') === '1',
    q: query.get('q') ?? '',
    range: range in SPANS || range === 'custom' ? range : '',
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
    sort: sort in ORDERS ? (sort as RunSort) : '-created',
  };
}

export function filtered(filters: Filters): boolean {
  return Boolean(filters.status || filters.workflow || filters.subject || filters.q || filters.range);
}

export function href(filters: Filters, before?: string): string {
  const query = new URLSearchParams();
  if (filters.q) query.set('q', filters.q);
  if (filters.status) query.set('status', filters.status);
  if (filters.workflow) query.set('workflow', filters.workflow);
  if (filters.subject) query.set('subject', filters.subject);
  if (filters.range) query.set('range', filters.range);
  if (filters.range === 'custom' && filters.since) query.set('since', filters.since);
  if (filters.range === 'custom' && filters.until) query.set('until', filters.until);
  if (filters.sort !== '-created') query.set('sort', filters.sort);
  if (filters.all) query.set('all', '1');
  if (before) query.set('before', before);
  const text = query.toString();
  return text ? `/runs?${text}` : '/runs';
}

/** The API's query for the filters; a span back from now is counted from `now`, each time the list is read. */
export function apiQuery(filters: Filters, before: string | null, pageSize: number, now: number): string {
  const query = new URLSearchParams({ limit: String(pageSize), counts: 'true' });
  if (filters.status) query.set('status', filters.status);
  if (filters.workflow) query.set('workflow', filters.workflow);
  if (filters.subject) query.set('subject', filters.subject);
  if (filters.q) query.set('q', filters.q);
  const span = SPANS[filters.range];
  if (span) query.set('since', new Date(now - span.ms).toISOString());
  if (filters.range === 'custom' && filters.since) query.set('since', filters.since);
  if (filters.range === 'custom' && filters.until) query.set('until', filters.until);
  if (filters.sort !== '-created') query.set('sort', filters.sort);
  if (!filters.all) query.set('parent', 'none');
  if (before) query.set('before', before);
  return query.toString();
}

export const orderOf = (sort: RunSort): string => ORDERS[sort];

/** A UTC time from the address as a `datetime-local` field shows it, in the viewer's zone. */
function localField(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A `datetime-local` value (the viewer's zone) as the UTC time the address and the API keep. */
const utcOf = (local: string): string => (local ? new Date(local).toISOString() : '');

/**
 * The filters, drawn once for the page (never re-mounted, so the field a person is in keeps the
 * focus while the list reloads); the text fields follow the address when it changes otherwise
 * (a link that clears them, Back).
 */
export function FilterBar({ filters }: { filters: Filters }): JSX.Element {
  const [q, setQ] = useState(filters.q);
  const [workflow, setWorkflow] = useState(filters.workflow);
  const [subject, setSubject] = useState(filters.subject);
  useEffect(() => setQ(filters.q), [filters.q]);
  useEffect(() => setWorkflow(filters.workflow), [filters.workflow]);
  useEffect(() => setSubject(filters.subject), [filters.subject]);
  const apply = (change: Partial<Filters>) => navigate(href({ ...filters, q, workflow, subject, ...change }), true);
  return (
    <form
      class="filters"
      role="search"
      aria-label="Find runs"
      onSubmit={(event) => {
        event.preventDefault();
        apply({});
      }}
    >
      <label class="wide">
        Search
        <input type="search" value={q} maxLength={200} placeholder="id, workflow, subject, input, output, label" onInput={(event) => setQ(event.currentTarget.value)} />
      </label>
      <label>
        Phase
        <select value={filters.status} onChange={(event) => apply({ status: event.currentTarget.value })}>
          <option value="">any</option>
          {PHASES.map((phase) => (
            <option value={phase}>{phase}</option>
          ))}
          <option value="pending,running,waiting">not ended</option>
        </select>
      </label>
      <label>
        Workflow
        <input type="search" value={workflow} placeholder="saga.sh" onInput={(event) => setWorkflow(event.currentTarget.value)} />
      </label>
      <label>
        Subject
        <input type="search" value={subject} placeholder="cust-1" onInput={(event) => setSubject(event.currentTarget.value)} />
      </label>
      <label>
        Created
        <select value={filters.range} onChange={(event) => apply({ range: event.currentTarget.value })}>
          <option value="">any time</option>
          {Object.entries(SPANS).map(([value, span]) => (
            <option value={value}>{span.label}</option>
          ))}
          <option value="custom">between…</option>
        </select>
      </label>
      {filters.range === 'custom' && (
        <>
          <label>
            From
            <input type="datetime-local" value={localField(filters.since)} onChange={(event) => apply({ since: utcOf(event.currentTarget.value) })} />
          </label>
          <label>
            Until
            <input type="datetime-local" value={localField(filters.until)} onChange={(event) => apply({ until: utcOf(event.currentTarget.value) })} />
          </label>
        </>
      )}
      <label>
        Order
        <select value={filters.sort} onChange={(event) => apply({ sort: event.currentTarget.value as RunSort })}>
          {Object.entries(ORDERS).map(([value, label]) => (
            <option value={value}>{label}</option>
          ))}
        </select>
      </label>
      <button type="submit">Find</button>
      <label class="check">
        <input type="checkbox" checked={filters.all} onChange={(event) => apply({ all: event.currentTarget.checked })} />
        include runs started by other runs
      </label>
    </form>
  );
}

/** How many runs the filters find in each phase, each a link that lists them (the address keeps the rest). */
export function PhaseChips({ filters, counts }: { filters: Filters; counts: ResponseOf<'GET /runs'>['counts'] }): JSX.Element | null {
  if (!counts) return null;
  const total = PHASES.reduce((sum, phase) => sum + counts[phase], 0);
  const chip = (status: string, label: string, count: number) => (
    <li>
      <Link href={href({ ...filters, status })} class={`chip${status ? ` phase-${status}` : ''}`} aria-current={filters.status === status ? 'page' : undefined}>
        {label} <span class="count">{count}</span>
      </Link>
    </li>
  );
  return (
    <nav aria-label="Runs found, by status">
      <ul class="chips">
        {chip('', 'all', total)}
        {PHASES.map((phase) => chip(phase, phase, counts[phase]))}
      </ul>
    </nav>
  );
}
