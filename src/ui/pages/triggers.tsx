import type { JSX } from 'preact';
import { api, type ResponseOf } from '../api.js';
import { Code, Empty, ErrorBox, Loading, PhaseBadge, RunLink, Time, Title } from '../components.js';
import { formatDuration } from '../format.js';
import { useNow, usePoll } from '../hooks.js';
import { Link } from '../router.js';

export function HandlersPage(): JSX.Element {
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /handlers'>>('/handlers'), [], 5000, () => true);
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
      {data && data.handlers.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">On event</th>
              <th scope="col">Workflow</th>
              <th scope="col">Interpreter</th>
            </tr>
          </thead>
          <tbody>
            {data.handlers.map((handler) => (
              <tr key={handler.name}>
                <th scope="row">{handler.name}</th>
                <td>
                  <code>{handler.eventType}</code>
                </td>
                <td>
                  <Link href={`/runs?workflow=${encodeURIComponent(handler.workflow)}`}>{handler.workflow}</Link>
                </td>
                <td>{handler.interpreter}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function SchedulesPage(): JSX.Element {
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /schedules'>>('/schedules'), [], 5000, () => true);
  const now = useNow(1000);
  return (
    <section aria-labelledby="page-title">
      <Title text="Schedules">
        <span id="page-title">Schedules</span>
      </Title>
      <p class="muted">A tick that finds the schedule’s last run still going is skipped (unless its overlap is allow); missed ticks are not made up.</p>
      {error && <ErrorBox error={error} what="the schedules" />}
      {!data && !error && <Loading what="schedules" />}
      {data && data.schedules.length === 0 && (
        <Empty title="No schedules.">
          <p>
            Add one with <Code>spool schedule create --every 5m --name NAME workflow.sh</Code> (or <Code>--cron '0 * * * *'</Code>).
          </p>
        </Empty>
      )}
      {data && data.schedules.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Cadence</th>
              <th scope="col">Workflow</th>
              <th scope="col">Next tick</th>
              <th scope="col">Last run</th>
              <th scope="col" class="num">Skipped ticks</th>
            </tr>
          </thead>
          <tbody>
            {data.schedules.map((schedule) => (
              <tr key={schedule.name}>
                <th scope="row">{schedule.name}</th>
                <td>{schedule.cron ? <code>{schedule.cron}</code> : `every ${formatDuration(schedule.everyMs ?? 0)}`}</td>
                <td>
                  <Link href={`/runs?workflow=${encodeURIComponent(schedule.workflow)}`}>{schedule.workflow}</Link>
                </td>
                <td>
                  <Time iso={schedule.nextAt} relative now={now} /> <span class="muted">(<Time iso={schedule.nextAt} />)</span>
                </td>
                <td>{schedule.lastRunId ? <RunLink id={schedule.lastRunId} /> : <span class="muted">none yet</span>}</td>
                <td class="num">{schedule.skipped}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function WorkflowsPage(): JSX.Element {
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /workflows'>>('/workflows'), [], 5000, () => true);
  const now = useNow();
  return (
    <section aria-labelledby="page-title">
      <Title text="Workflows">
        <span id="page-title">Workflows</span>
      </Title>
      <p class="muted">The workflows runs were started from, by name (runs that other runs started are counted with those).</p>
      {error && <ErrorBox error={error} what="the workflows" />}
      {!data && !error && <Loading what="workflows" />}
      {data && data.workflows.length === 0 && (
        <Empty title="No workflows have run yet.">
          <p>
            Submit a script or a pipeline: <Code>spool submit deploy.sh</Code>.
          </p>
        </Empty>
      )}
      {data && data.workflows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Workflow</th>
              <th scope="col">Interpreter</th>
              <th scope="col" class="num">Runs</th>
              <th scope="col">Last run</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {data.workflows.map((workflow) => (
              <tr key={workflow.name}>
                <th scope="row">
                  <Link href={`/workflows/${encodeURIComponent(workflow.name)}`}>{workflow.name}</Link>
                </th>
                <td>{workflow.interpreter}</td>
                <td class="num">
                  <Link href={`/runs?workflow=${encodeURIComponent(workflow.name)}`}>{workflow.runs.toLocaleString()}</Link>
                </td>
                <td>
                  <RunLink id={workflow.lastRun.id} /> <PhaseBadge phase={workflow.lastRun.status} />
                </td>
                <td>
                  <Time iso={workflow.lastRun.createdAt} relative now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
