import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ENDED, PHASES, type ResponseOf } from '../api.js';
import { Awaiting, Code, Duration, Empty, ErrorBox, Loading, PhaseBadge, RunLink, Time, Title } from '../components.js';
import { useNow, usePoll } from '../hooks.js';
import { Link, navigate, type Location } from '../router.js';

const PAGE_SIZE = 50;

interface Filters {
  status: string;
  workflow: string;
  subject: string;
  all: boolean;
}

function filtersOf(query: URLSearchParams): Filters {
  return { status: query.get('status') ?? '', workflow: query.get('workflow') ?? '', subject: query.get('subject') ?? '', all: query.get('all') === '1' };
}

function href(filters: Filters, before?: string): string {
  const query = new URLSearchParams();
  if (filters.status) query.set('status', filters.status);
  if (filters.workflow) query.set('workflow', filters.workflow);
  if (filters.subject) query.set('subject', filters.subject);
  if (filters.all) query.set('all', '1');
  if (before) query.set('before', before);
  const text = query.toString();
  return text ? `/runs?${text}` : '/runs';
}

function apiQuery(filters: Filters, before: string | null): string {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filters.status) query.set('status', filters.status);
  if (filters.workflow) query.set('workflow', filters.workflow);
  if (filters.subject) query.set('subject', filters.subject);
  if (!filters.all) query.set('parent', 'none');
  if (before) query.set('before', before);
  return query.toString();
}

/**
 * The filters, drawn once for the page (never re-mounted, so the field a person is in keeps the
 * focus while the list reloads); the text fields follow the address when it changes otherwise
 * (a link that clears them, Back).
 */
function FilterBar({ filters }: { filters: Filters }): JSX.Element {
  const [workflow, setWorkflow] = useState(filters.workflow);
  const [subject, setSubject] = useState(filters.subject);
  useEffect(() => setWorkflow(filters.workflow), [filters.workflow]);
  useEffect(() => setSubject(filters.subject), [filters.subject]);
  const apply = (change: Partial<Filters>) => navigate(href({ ...filters, workflow, subject, ...change }), true);
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter runs"
      onSubmit={(event) => {
        event.preventDefault();
        apply({});
      }}
    >
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
      <button type="submit">Filter</button>
      <label class="check">
        <input type="checkbox" checked={filters.all} onChange={(event) => apply({ all: event.currentTarget.checked })} />
        include runs started by other runs
      </label>
    </form>
  );
}

export function RunsPage({ location }: { location: Location }): JSX.Element {
  const filters = filtersOf(location.query);
  const before = location.query.get('before');
  const key = `${apiQuery(filters, before)}`;
  // The first page follows new runs as they come; an older page holds still while it is read.
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /runs'>>(`/runs?${key}`), [key], 2000, () => !before);
  const now = useNow();
  useEffect(() => {
    if (data) performance.mark('spool:runs-rendered');
  }, [Boolean(data)]);
  const filtered = Boolean(filters.status || filters.workflow || filters.subject);
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <Title text="Runs">
          <span id="page-title">Runs</span>
        </Title>
        {!before && (
          <span class="live" title="This list updates itself every two seconds">
            <span aria-hidden="true">●</span> live
          </span>
        )}
      </div>
      <FilterBar filters={filters} />
      {error && <ErrorBox error={error} what="the runs" />}
      {!data && !error && <Loading what="runs" />}
      {data && data.runs.length === 0 && (
        <Empty title={filtered ? 'No runs match these filters.' : before ? 'No older runs.' : 'No runs yet.'}>
          {filtered ? (
            <p>
              <Link href="/runs">Clear the filters</Link> to see every run.
            </p>
          ) : (
            <p>
              Start one with <Code>spool submit workflow.sh</Code> or <Code>spool run workflow.sh</Code>; it shows here at once.
            </p>
          )}
        </Empty>
      )}
      {data && data.runs.length > 0 && (
        <table class="runs">
          <caption class="visually-hidden">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Workflow</th>
              <th scope="col">Phase</th>
              <th scope="col">Awaiting</th>
              <th scope="col">Subject</th>
              <th scope="col">Started</th>
              <th scope="col">Took</th>
              <th scope="col" class="num">Passes</th>
            </tr>
          </thead>
          <tbody>
            {data.runs.map((run) => (
              <tr key={run.id} data-run={run.id}>
                <td>
                  <RunLink id={run.id} />
                </td>
                <td class="workflow">{run.workflow}</td>
                <td>
                  <PhaseBadge phase={run.status} />
                </td>
                <td class="awaiting">
                  <Awaiting text={run.awaiting} />
                </td>
                <td>{run.subject ?? ''}</td>
                <td>
                  <Time iso={run.createdAt} relative now={now} />
                </td>
                <td>
                  <Duration ms={(run.finishedAt ? new Date(run.finishedAt).getTime() : ENDED.includes(run.status) ? new Date(run.updatedAt).getTime() : now) - new Date(run.createdAt).getTime()} />
                </td>
                <td class="num">{run.passes}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && (before || data.next) && (
        <nav class="pager" aria-label="Pages of runs">
          {before && <Link href={href(filters)}>← Newest</Link>}
          {data.next && <Link href={href(filters, data.next)}>Older →</Link>}
        </nav>
      )}
    </section>
  );
}
