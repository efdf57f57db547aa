import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ResponseOf } from '../api.js';
import { Code, Empty, ErrorBox, Loading, PhaseBadge, RunLink, Time, Title } from '../components.js';
import { useNow, usePoll } from '../hooks.js';
import { Link } from '../router.js';

type Handler = ResponseOf<'GET /handlers'>['handlers'][number];

/** How many of a handler's events a page shows. */
const EVENTS_PAGE = 10;

/** A handler's events, newest first, a page at a time: each with the run it started, linked. */
function HandlerEvents({ handler, now }: { handler: Handler; now: number }): JSX.Element {
  // The cursors of the pages before this one, so Newer goes back; the first page is null.
  const [pages, setPages] = useState<(string | null)[]>([null]);
  const before = pages.at(-1) ?? null;
  const path = `/handlers/${encodeURIComponent(handler.name)}/events?limit=${EVENTS_PAGE}${before ? `&before=${before}` : ''}`;
  // The first page follows new events; an older page stays as it was read.
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /handlers/:name/events'>>(path), [path], 3000, () => before === null);
  const titleId = `events-${handler.name}`;
  return (
    <section class="card handler-events" aria-labelledby={titleId} data-handler={handler.name}>
      <h2 id={titleId}>
        {handler.name} <span class="muted">on</span> <code>{handler.eventType}</code>
      </h2>
      <p class="muted">
        Starts <Link href={`/runs?workflow=${encodeURIComponent(handler.workflow)}`}>{handler.workflow}</Link> ({handler.interpreter}) for each event.
      </p>
      {error && <ErrorBox error={error} what={`the events of ${handler.name}`} />}
      {!data && !error && <Loading what="events" />}
      {data && data.events.length === 0 && before === null && (
        <p class="muted">
          No <code>{handler.eventType}</code> events yet: <Code>spool event emit {handler.eventType} --key SUBJECT</Code> sends one.
        </p>
      )}
      {data && data.events.length > 0 && (
        <table class="stack events">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Subject</th>
              <th scope="col">When</th>
              <th scope="col">Run it started</th>
            </tr>
          </thead>
          <tbody>
            {data.events.map((event) => (
              <tr key={event.seq}>
                <td>
                  <code>{event.id}</code>
                </td>
                <td>{event.subject ?? <span class="muted">none</span>}</td>
                <td>
                  <Time iso={event.emittedAt} relative now={now} />
                </td>
                <td>
                  {event.run ? (
                    <>
                      <RunLink id={event.run.id} /> <PhaseBadge phase={event.run.status} />
                    </>
                  ) : (
                    <span class="muted">none (the event came before this handler, or its run was deleted)</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(pages.length > 1 || data?.next) && (
        <div class="buttons">
          {pages.length > 1 && (
            <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
              ← Newer
            </button>
          )}
          {data?.next && (
            <button type="button" onClick={() => setPages([...pages, data.next])}>
              Older →
            </button>
          )}
        </div>
      )}
    </section>
  );
}

/** Handlers (issue 33, item 9): what each takes and starts, and its recent events with their runs. */
export function HandlersPage(): JSX.Element {
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /handlers'>>('/handlers'), [], 5000, () => true);
  const now = useNow(5000);
  return (
    <section aria-labelledby="page-title">
      <Title text="Handlers">
        <span id="page-title">Handlers</span>
      </Title>
      <p class="muted">Each event of a handler’s type starts one run of its workflow; the run takes the event’s subject.</p>
      {error && <ErrorBox error={error} what="the handlers" />}
      {!data && !error && <Loading what="handlers" />}
      {data && data.handlers.length === 0 && (
        <Empty title="No handlers.">
          <p>
            Add one with <Code>spool handler set NAME ./workflow.sh --on EVENT_TYPE</Code>.
          </p>
        </Empty>
      )}
      {data?.handlers.map((handler) => <HandlerEvents handler={handler} now={now} key={handler.name} />)}
    </section>
  );
}
