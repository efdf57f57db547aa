import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ResponseOf } from '../api.js';
import { Code, Empty, ErrorBox, Loading, PhaseBadge, RunLink, Time, Title } from '../components.js';
import { useNow, usePoll } from '../hooks.js';
import { Link } from '../router.js';
import { StartRun, StartRunButton } from './start-run.js';

export function WorkflowsPage(): JSX.Element {
  const { data, error } = usePoll(() => api.get<ResponseOf<'GET /workflows'>>('/workflows'), [], 5000, () => true);
  const now = useNow();
  const [starting, setStarting] = useState<string | null>(null);
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
      {starting && <StartRun name={starting} key={starting} onClose={() => setStarting(null)} />}
      {data && data.workflows.length > 0 && (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Workflow</th>
              <th scope="col">Interpreter</th>
              <th scope="col" class="num">Runs</th>
              <th scope="col">Last run</th>
              <th scope="col">Started</th>
              <th scope="col">
                <span class="visually-hidden">Start</span>
              </th>
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
                <td>
                  <StartRunButton name={workflow.name} onClick={() => setStarting(workflow.name)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
