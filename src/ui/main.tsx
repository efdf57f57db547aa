import { render, type JSX } from 'preact';
import './style.css';
import { Empty, Title } from './components.js';
import { RunPage } from './pages/run.js';
import { RunsPage } from './pages/runs.js';
import { ApprovalsPage } from './pages/waiting-approvals.js';
import { HandlersPage } from './pages/handlers.js';
import { SchedulesPage } from './pages/schedules.js';
import { WorkflowsPage } from './pages/triggers.js';
import { WorkflowPage } from './pages/workflow.js';
import { Link, navigate, useLocation, type Location } from './router.js';

const NAV: [string, string][] = [
  ['/runs', 'Runs'],
  ['/workflows', 'Workflows'],
  ['/handlers', 'Handlers'],
  ['/schedules', 'Schedules'],
  ['/approvals', 'Approvals'],
];

function Page({ location }: { location: Location }): JSX.Element {
  const { path } = location;
  if (path === '/' || path === '') {
    navigate('/runs', true);
    return <></>;
  }
  if (path === '/runs' || path === '/runs/') return <RunsPage location={location} />;
  if (path.startsWith('/runs/')) return <RunPage id={decodeURIComponent(path.slice('/runs/'.length))} key={path} />;
  if (path === '/handlers') return <HandlersPage />;
  if (path === '/schedules') return <SchedulesPage />;
  if (path === '/workflows') return <WorkflowsPage />;
  if (path.startsWith('/workflows/')) return <WorkflowPage name={decodeURIComponent(path.slice('/workflows/'.length))} location={location} key={path} />;
  if (path === '/approvals') return <ApprovalsPage />;
  return (
    <section>
      <Title text="Not found">No such page</Title>
      <Empty title={`Nothing lives at ${path}.`}>
        <p>
          Go to the <Link href="/runs">runs</Link>.
        </p>
      </Empty>
    </section>
  );
}

function App(): JSX.Element {
  const location = useLocation();
  const section = `/${location.path.split('/')[1] ?? ''}`;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/runs" class="brand">
          <span aria-hidden="true">◎</span> Hyperspool
        </Link>
        <nav aria-label="Sections">
          {NAV.map(([href, text]) => (
            <Link href={href} aria-current={section === href ? 'page' : undefined}>
              {text}
            </Link>
          ))}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Page location={location} />
      </main>
      <footer class="muted">Times are in your time zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}).</footer>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
