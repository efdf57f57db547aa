import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, ENDED, type ResponseOf } from '../api.js';
import { Awaiting, Code, Duration, Empty, ErrorBox, Loading, PhaseBadge, RunName, Time, Title } from '../components.js';
import { useNow, usePoll } from '../hooks.js';
import { Link, type Location } from '../router.js';
import { FilterBar, PhaseChips, apiQuery, filtered, filtersOf, href, orderOf } from './runs-filters.js';
import { EmitEvent } from './emit-event.js';
import { BulkBar, RowCheck, useSelection } from './runs-bulk.js';

const PAGE_SIZE = 50;

export function RunsPage({ location }: { location: Location }): JSX.Element {
  const filters = filtersOf(location.query);
  const before = location.query.get('before');
  // The key leaves out the time a span back from now is counted from: each read counts it anew.
  const key = apiQuery(filters, before, PAGE_SIZE, 0);
  // The first page follows new runs as they come; an older page holds still while it is read.
  const { data, error, reload } = usePoll(() => api.get<ResponseOf<'GET /runs'>>(`/runs?${apiQuery(filters, before, PAGE_SIZE, Date.now())}`), [key], 2000, () => !before);
  const now = useNow();
  const selection = useSelection(data?.runs.map((run) => run.id) ?? [], key);
  useEffect(() => {
    if (data) performance.mark('spool:runs-rendered');
  }, [Boolean(data)]);
  const narrowed = filtered(filters);
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
      <EmitEvent />
      <FilterBar filters={filters} />
      <PhaseChips filters={filters} counts={data?.counts} />
      {error && <ErrorBox error={error} what="the runs" />}
      {!data && !error && <Loading what="runs" />}
      {data && data.runs.length === 0 && (
        <Empty title={narrowed ? 'No runs match these filters.' : before ? 'No older runs.' : 'No runs yet.'}>
          {narrowed ? (
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
      {data && data.runs.length > 0 && <BulkBar runs={data.runs} selection={selection} onDone={reload} />}
      {data && data.runs.length > 0 && (
        <table class="runs">
          <caption class="visually-hidden">Runs, {orderOf(filters.sort)}</caption>
          <thead>
            <tr>
              <th scope="col" class="pick-col">
                <span class="visually-hidden">Selected</span>
              </th>
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
                <td class="pick-col">
                  <RowCheck id={run.id} selection={selection} />
                </td>
                <td>
                  <RunName run={run} />
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
