import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ResponseOf } from '../api.js';
import { Empty, ErrorBox, Loading, RunLink, Title } from '../components.js';
import { formatDuration, plural } from '../format.js';
import { useNow, usePoll } from '../hooks.js';
import { ApprovalProgress, WaitingGate } from './approvals.js';

type Waiting = ResponseOf<'GET /approvals/waiting'>;

/** Who the server takes the person viewing for, as the page says it. */
function Viewer({ caller }: { caller: Waiting['caller'] }): JSX.Element {
  if (caller.user === null) return <p class="muted">This server does not know who you are, so only gates that ask no one in particular are listed.</p>;
  return (
    <p class="muted viewer">
      Gates waiting that <strong>{caller.user}</strong>
      {caller.groups.length > 0 && <> (in {caller.groups.join(', ')})</>} may answer: those whose approvers name you or a group you are in, in runs you did not
      submit and that you have not answered yet, and those that ask no one in particular.
    </p>
  );
}

/** Approvals waiting for me (issue 33, item 9): every gate across runs the person viewing may answer, its form in place. */
export function ApprovalsPage(): JSX.Element {
  const { data, error, reload } = usePoll(() => api.get<Waiting>('/approvals/waiting'), [], 3000, () => true);
  const now = useNow(1000);
  const [answered, setAnswered] = useState<string | null>(null);
  return (
    <section aria-labelledby="page-title">
      <Title text="Approvals">
        <span id="page-title">Approvals waiting for you</span>
      </Title>
      {data && <Viewer caller={data.caller} />}
      <p role="status" aria-live="polite" class="outcome">
        {answered}
      </p>
      {error && <ErrorBox error={error} what="the approvals waiting" />}
      {!data && !error && <Loading what="approvals" />}
      {data && data.approvals.length === 0 && (
        <Empty title="Nothing is waiting for you.">
          <p>
            A pipeline’s approval gate shows here while it waits, when you may answer it: its <code>approvers</code> name you or a group you are in (and you did not
            submit its run), or it asks no one in particular.
          </p>
        </Empty>
      )}
      {data?.approvals.map(({ run, gate, stillNeeded }) => (
        <article class="card gate gate-waiting" aria-labelledby={`gate-${gate.runId}`} data-gate={gate.job} data-run={run.id} key={gate.runId}>
          <h2 id={`gate-${gate.runId}`}>
            {gate.prompt} <span class="muted gate-job">job {gate.job}</span>
          </h2>
          <p class="gate-run">
            Run <RunLink id={run.id} /> of {run.workflow}
            {run.subject && <> for {run.subject}</>}
            {run.submittedBy && <>, submitted by {run.submittedBy}</>}; has waited{' '}
            <span class="waited" title={gate.since}>
              {formatDuration(Math.max(0, now - Date.parse(gate.since)))}
            </span>
            ; needs{' '}
            <strong class="still-needed">{plural(stillNeeded, 'more approval')}</strong>.
          </p>
          {gate.approvers && <ApprovalProgress gate={{ ...gate, approvers: gate.approvers }} />}
          <WaitingGate
            runId={run.id}
            gate={gate}
            now={now}
            onAnswered={() => {
              setAnswered(`Answered “${gate.prompt}” of ${run.id.split(':').at(-1) ?? run.id}.`);
              reload();
            }}
          />
        </article>
      ))}
    </section>
  );
}
