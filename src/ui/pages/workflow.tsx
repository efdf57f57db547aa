import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, PHASES, type Phase, type ResponseOf } from '../api.js';
import { Duration, ErrorBox, Loading, PhaseBadge, Title } from '../components.js';
import { formatTime, plural } from '../format.js';
import { usePoll } from '../hooks.js';
import { Link, navigate, type Location } from '../router.js';
import { StartRun, StartRunButton } from './start-run.js';

type Stats = ResponseOf<'GET /workflows/:name/stats'>;
type Bucket = Stats['buckets'][number];

/** The windows a person picks from, as `?window=` in the address. */
const WINDOWS: [string, string, number][] = [
  ['1h', 'Last hour', 3_600_000],
  ['24h', 'Last day', 86_400_000],
  ['7d', 'Last 7 days', 7 * 86_400_000],
  ['30d', 'Last 30 days', 30 * 86_400_000],
];

const total = (bucket: Bucket): number => PHASES.reduce((sum, phase) => sum + bucket.counts[phase], 0);

/** Runs created per slice as stacked bars, a phase each; the table below says the same in words. */
function RunsOverTime({ stats }: { stats: Stats }): JSX.Element {
  const highest = Math.max(1, ...stats.buckets.map(total));
  const runs = stats.buckets.reduce((sum, bucket) => sum + total(bucket), 0);
  return (
    <figure class="runs-over-time">
      <figcaption>
        {plural(runs, 'run')} created, by the phase each is in now; a bar for each {formatSlice(stats.bucketMs)}.
      </figcaption>
      <div class="bars" aria-hidden="true">
        {stats.buckets.map((bucket) => (
          <div class="bar-slot" key={bucket.start} title={`${formatTime(bucket.start)}: ${summary(bucket) || 'no runs'}`}>
            {PHASES.filter((phase) => bucket.counts[phase] > 0).map((phase) => (
              <span class={`segment phase-${phase}`} style={{ height: `${(bucket.counts[phase] / highest) * 100}%` }} />
            ))}
          </div>
        ))}
      </div>
      <div class="bars-axis muted" aria-hidden="true">
        <span>{formatTime(stats.since)}</span>
        <span>{formatTime(stats.until)}</span>
      </div>
      <p class="legend" aria-hidden="true">
        {PHASES.filter((phase) => stats.buckets.some((bucket) => bucket.counts[phase] > 0)).map((phase) => (
          <PhaseBadge phase={phase} />
        ))}
      </p>
      <details>
        <summary>As a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">From</th>
              {PHASES.map((phase) => (
                <th scope="col" class="num">
                  <PhaseBadge phase={phase} />
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {stats.buckets.filter((bucket) => total(bucket) > 0).map((bucket) => (
              <tr key={bucket.start}>
                <th scope="row">{formatTime(bucket.start)}</th>
                {PHASES.map((phase) => (
                  <td class="num">{bucket.counts[phase]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

const summary = (bucket: Bucket): string =>
  PHASES.filter((phase: Phase) => bucket.counts[phase] > 0)
    .map((phase) => `${bucket.counts[phase]} ${phase}`)
    .join(', ');

function formatSlice(ms: number): string {
  if (ms % 86_400_000 === 0) return ms === 86_400_000 ? 'day' : `${ms / 86_400_000} days`;
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
}

function Durations({ durations }: { durations: Stats['durations'] }): JSX.Element {
  if (!durations) return <p class="muted">No run finished in this window, so there is no duration to show.</p>;
  return (
    <>
      <p class="muted">From creation to the end, of the {plural(durations.runs, 'run')} that finished in this window.</p>
      <dl class="durations">
        {(
          [
            ['Median (p50)', durations.p50Ms],
            ['p90', durations.p90Ms],
            ['p99', durations.p99Ms],
            ['Longest', durations.maxMs],
          ] as const
        ).map(([label, ms]) => (
          <div>
            <dt>{label}</dt>
            <dd>
              <Duration ms={ms} />
            </dd>
          </div>
        ))}
      </dl>
    </>
  );
}

/** One workflow: its runs by phase over a window, how long they take, and Start run (`/workflows/NAME`). */
export function WorkflowPage({ name, location }: { name: string; location: Location }): JSX.Element {
  const [starting, setStarting] = useState(false);
  const chosen = WINDOWS.find(([key]) => key === location.query.get('window')) ?? WINDOWS[1]!;
  const [key, , windowMs] = chosen;
  const { data, error } = usePoll(
    () => {
      const until = new Date();
      const query = new URLSearchParams({ since: new Date(until.getTime() - windowMs).toISOString(), until: until.toISOString() });
      return api.get<Stats>(`/workflows/${encodeURIComponent(name)}/stats?${query}`);
    },
    [name, key],
    30_000,
    () => true,
  );
  return (
    <section aria-labelledby="page-title">
      <Title text={name}>
        <span id="page-title">{name}</span>
      </Title>
      <p>
        <Link href={`/runs?workflow=${encodeURIComponent(name)}`}>Its runs</Link> · <Link href="/workflows">All workflows</Link>
      </p>
      <div class="buttons">
        <StartRunButton name={name} onClick={() => setStarting(true)} />
      </div>
      {starting && <StartRun name={name} onClose={() => setStarting(false)} />}
      <div class="buttons window-choice" role="group" aria-label="Window">
        {WINDOWS.map(([each, label]) => (
          <button type="button" aria-pressed={each === key} onClick={() => navigate(`/workflows/${encodeURIComponent(name)}?window=${each}`, true)}>
            {label}
          </button>
        ))}
      </div>
      {error && <ErrorBox error={error} what={`the runs of ${name}`} />}
      {!data && !error && <Loading what="its runs over time" />}
      {data && (
        <>
          <h2>Runs over time</h2>
          <RunsOverTime stats={data} />
          <h2>How long runs take</h2>
          <Durations durations={data.durations} />
        </>
      )}
    </section>
  );
}
