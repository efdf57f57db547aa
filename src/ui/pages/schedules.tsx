import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, type ResponseOf } from '../api.js';
import { Code, Empty, ErrorBox, Loading, PhaseBadge, RunLink, Time, Title } from '../components.js';
import { formatDuration } from '../format.js';
import { useNow, usePoll } from '../hooks.js';
import { Link } from '../router.js';

type Schedule = ResponseOf<'GET /schedules'>['schedules'][number];

/** What the last action on the page did, said in its live region. */
type Outcome = { kind: 'started'; schedule: string; run: string } | { kind: 'done'; text: string } | { kind: 'failed'; text: string };

const schedulePath = (name: string, action: 'trigger' | 'suspend' | 'resume') => `/schedules/${encodeURIComponent(name)}/${action}`;

/**
 * Trigger now, and Suspend or Resume: each a request, then the list read again. Busy, the buttons
 * are aria-disabled rather than disabled, so the one pressed keeps the keyboard's focus (Suspend
 * becomes Resume in place).
 */
function ScheduleActions({ schedule, onOutcome }: { schedule: Schedule; onOutcome: (outcome: Outcome) => void }): JSX.Element {
  const [busy, setBusy] = useState(false);
  const act = async (action: 'trigger' | 'suspend' | 'resume') => {
    if (busy) return;
    setBusy(true);
    try {
      if (action === 'trigger') {
        const { run } = await api.post<ResponseOf<'POST /schedules/:name/trigger'>>(schedulePath(schedule.name, action));
        onOutcome({ kind: 'started', schedule: schedule.name, run });
      } else {
        await api.post<ResponseOf<'POST /schedules/:name/suspend'>>(schedulePath(schedule.name, action));
        onOutcome({ kind: 'done', text: action === 'suspend' ? `Suspended ${schedule.name}: it makes no ticks until resumed.` : `Resumed ${schedule.name}: its next tick is counted from now.` });
      }
    } catch (error) {
      onOutcome({ kind: 'failed', text: error instanceof ApiError ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };
  const suspended = schedule.suspendedAt !== null;
  return (
    <div class="buttons row-buttons">
      <button type="button" aria-disabled={busy} onClick={() => void act('trigger')} aria-label={`Trigger now: ${schedule.name}`}>
        Trigger now
      </button>
      <button type="button" aria-disabled={busy} onClick={() => void act(suspended ? 'resume' : 'suspend')} aria-label={`${suspended ? 'Resume' : 'Suspend'} ${schedule.name}`}>
        {suspended ? 'Resume' : 'Suspend'}
      </button>
    </div>
  );
}

function NextTick({ schedule, now }: { schedule: Schedule; now: number }): JSX.Element {
  if (schedule.nextAt === null)
    return (
      <span class="suspended">
        Suspended{schedule.suspendedAt && <> since <Time iso={schedule.suspendedAt} relative now={now} /></>}
      </span>
    );
  return (
    <>
      <Time iso={schedule.nextAt} relative now={now} /> <span class="muted">(<Time iso={schedule.nextAt} />)</span>
    </>
  );
}

/** Schedules (issue 33, item 9): each with its next tick, its last runs and their phases, Trigger now and Suspend or Resume. */
export function SchedulesPage(): JSX.Element {
  // As often as the runs list: the last runs' phases change while they go on.
  const { data, error, reload } = usePoll(() => api.get<ResponseOf<'GET /schedules'>>('/schedules'), [], 2000, () => true);
  const now = useNow(1000);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const acted = (next: Outcome) => {
    setOutcome(next);
    reload();
  };
  return (
    <section aria-labelledby="page-title">
      <Title text="Schedules">
        <span id="page-title">Schedules</span>
      </Title>
      <p class="muted">
        A tick that finds the schedule’s last run still going is skipped (unless its overlap is allow); missed ticks are not made up. A suspended schedule makes no
        ticks; resumed, its next tick is counted from then. Trigger now starts a run at once, suspended or not, and leaves the next tick where it was.
      </p>
      <p role="status" aria-live="polite" class={outcome?.kind === 'failed' ? 'form-error' : 'outcome'}>
        {outcome?.kind === 'started' && (
          <>
            {outcome.schedule} started <RunLink id={outcome.run} />.
          </>
        )}
        {outcome && outcome.kind !== 'started' && outcome.text}
      </p>
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
        <table class="stack schedules">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Cadence</th>
              <th scope="col">Workflow</th>
              <th scope="col">Next tick</th>
              <th scope="col">Last runs</th>
              <th scope="col" class="num">Skipped ticks</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data.schedules.map((schedule) => (
              <tr key={schedule.name} data-schedule={schedule.name}>
                <th scope="row">{schedule.name}</th>
                <td>{schedule.cron ? <code>{schedule.cron}</code> : `every ${formatDuration(schedule.everyMs ?? 0)}`}</td>
                <td>
                  <Link href={`/runs?workflow=${encodeURIComponent(schedule.workflow)}`}>{schedule.workflow}</Link>
                </td>
                <td class="next-tick">
                  <NextTick schedule={schedule} now={now} />
                </td>
                <td>
                  {schedule.recentRuns.length > 0 ? (
                    <ul class="recent-runs" aria-label={`Last runs of ${schedule.name}`}>
                      {schedule.recentRuns.map((run) => (
                        <li key={run.id}>
                          <RunLink id={run.id} /> <PhaseBadge phase={run.status} /> <Time iso={run.createdAt} relative now={now} />
                        </li>
                      ))}
                    </ul>
                  ) : (
                    <span class="muted">none yet</span>
                  )}
                </td>
                <td class="num">{schedule.skipped}</td>
                <td>
                  <ScheduleActions schedule={schedule} onOutcome={acted} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
