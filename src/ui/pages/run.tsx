import type { JSX } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, ENDED, runPath, type Artifact, type Gate, type LogLine, type ResponseOf, type Run, type RunShape, type TimelineEntry } from '../api.js';
import { Awaiting, Duration, Empty, ErrorBox, Loading, PhaseBadge, RunLink, RunName, Time, Title, Value } from '../components.js';
import { useNow, usePoll } from '../hooks.js';
import { Link } from '../router.js';
import { Approvals } from './approvals.js';
import { RerunLinks, useRerun } from './rerun.js';
import { Shape } from './shape.js';
import { Timeline } from './timeline.js';

interface RunData {
  run: Run;
  timeline: TimelineEntry[];
  approvals: Gate[];
  children: Run[];
  artifacts: Artifact[];
  shape: RunShape | null;
}

async function loadDetails(id: string): Promise<RunData> {
  const path = runPath(id);
  // All at once: a script run has no gates, and its approvals answer is an empty list (its shape has no vertices).
  const [{ run: latest, timeline }, { runs: children }, { approvals }, { artifacts }, shape] = await Promise.all([
    api.get<ResponseOf<'GET /runs/:id/timeline'>>(`${path}/timeline`),
    api.get<ResponseOf<'GET /runs'>>(`/runs?parent=${encodeURIComponent(id)}&limit=1000`),
    api.get<ResponseOf<'GET /runs/:id/approvals'>>(`${path}/approvals`),
    api.get<ResponseOf<'GET /runs/:id/artifacts'>>(`${path}/artifacts`),
    api.get<ResponseOf<'GET /runs/:id/shape'>>(`${path}/shape`),
  ]);
  if (performance.getEntriesByName('spool:timeline-fetched').length === 0) performance.mark('spool:timeline-fetched');
  return { run: latest, timeline, approvals, children: children.reverse(), artifacts, shape: shape.vertices.length === 0 ? null : shape };
}

const ended = (run: Run | undefined): boolean => Boolean(run && ENDED.includes(run.status));

/** The run page: what a run is doing or did, its journal as a timeline, its log, and what a person can do to it. */
export function RunPage({ id }: { id: string }): JSX.Element {
  // The run itself (one small answer) shows its heading and summary at once; its timeline, child
  // runs and gates (the large answers), asked for at the same time, follow, and are read again
  // while the run goes on.
  const first = usePoll(() => api.get<ResponseOf<'GET /runs/:id'>>(runPath(id)).then((answer) => answer.run), [id], 0, () => false);
  const details = usePoll(() => loadDetails(id), [id], 1500, (loaded) => !ended(loaded?.run));
  const reload = details.reload;
  const rerun = useRerun(id);
  const now = useNow(1000);
  const short = id.split(':').at(-1) ?? id;
  useEffect(() => {
    if (first.data) performance.mark('spool:run-rendered');
  }, [Boolean(first.data)]);
  useEffect(() => {
    if (details.data) performance.mark('spool:timeline-rendered');
  }, [Boolean(details.data)]);

  // The child runs' workflows, to name them where the timeline links them (kept while the children are).
  const children = details.data?.children;
  const names = useMemo(() => new Map((children ?? []).map((child) => [child.id, child.workflow])), [children]);
  const run = details.data?.run ?? first.data;
  const error = details.error ?? first.error;
  if (!run && error?.status === 404) {
    return (
      <section>
        <Title text="No such run">No such run</Title>
        <Empty title={`There is no run ${id}.`}>
          <p>
            Check the address; the run may belong to another project or namespace. The <Link href="/runs">runs</Link> list has every run
            here.
          </p>
        </Empty>
      </section>
    );
  }
  if (!run) {
    return (
      <section>
        <Title text={short}>Run {short}</Title>
        {error ? <ErrorBox error={error} what={`run ${id}`} /> : <Loading what="the run" />}
      </section>
    );
  }
  const data = details.data ?? { run, timeline: [], approvals: [], children: [], artifacts: [], shape: null };
  const loaded = Boolean(details.data);
  const finished = run.finishedAt ?? (ended(run) ? run.updatedAt : null);
  const annotations = data.timeline.filter((entry) => entry.verb === 'annotate' && entry.label);
  return (
    <article class="run-page" aria-labelledby="page-title" data-ready={loaded ? 'true' : 'false'}>
      <div class="page-head">
        {/* On a cluster a run is named by its Run (kubectl get run NAME); its key, which its pods' labels carry, beside it. */}
        <Title text={`${run.resource?.name ?? short} ${run.status}`}>
          <span id="page-title">
            Run <span class="run-id">{run.resource?.name ?? short}</span>
            {run.resource && <span class="run-key"> {short}</span>}
          </span>
        </Title>
        <PhaseBadge phase={run.status} />
        <button type="button" class="rerun" disabled={rerun.busy} onClick={() => rerun.rerun(null)} title="A new run of this run's script, from the top">
          Rerun
        </button>
        {!ended(run) && <CancelButton id={run.id} onDone={reload} />}
      </div>
      {rerun.failure && (
        <p role="alert" class="form-error">
          {rerun.failure}
        </p>
      )}
      {error && <ErrorBox error={error} what="the latest state (showing the last one loaded)" />}
      <dl class="summary">
        {run.resource && (
          <>
            <dt>Run resource</dt>
            <dd>
              <code>
                {run.resource.namespace}/{run.resource.name}
              </code>
            </dd>
          </>
        )}
        <dt>Run id</dt>
        <dd>
          <code>{run.id}</code>
        </dd>
        <dt>Workflow</dt>
        <dd>
          <Link href={`/runs?workflow=${encodeURIComponent(run.workflow)}`}>{run.workflow}</Link>
        </dd>
        {run.awaiting && (
          <>
            <dt>Awaiting</dt>
            <dd class="awaiting">
              <Awaiting text={run.awaiting} />, since <Time iso={run.updatedAt} relative now={now} />
              {run.wakeAt && (
                <>
                  {' '}
                  · wakes <Time iso={run.wakeAt} relative now={now} /> (<Time iso={run.wakeAt} />)
                </>
              )}
            </dd>
          </>
        )}
        {run.error && (
          <>
            <dt>Error</dt>
            <dd class="run-error">{run.error}</dd>
          </>
        )}
        <dt>Started</dt>
        <dd>
          <Time iso={run.createdAt} /> · <Time iso={run.createdAt} relative now={now} />
        </dd>
        <dt>{finished ? 'Took' : 'Running for'}</dt>
        <dd>
          <Duration ms={(finished ? new Date(finished).getTime() : now) - new Date(run.createdAt).getTime()} />
          {finished && (
            <>
              {' '}
              · ended <Time iso={finished} />
            </>
          )}
        </dd>
        <dt>Passes</dt>
        <dd>{run.passes}</dd>
        {run.subject && (
          <>
            <dt>Subject</dt>
            <dd>{run.subject}</dd>
          </>
        )}
        {run.handler && (
          <>
            <dt>Handler</dt>
            <dd>
              <Link href="/handlers">{run.handler}</Link>
            </dd>
          </>
        )}
        {run.parentId && (
          <>
            <dt>Started by</dt>
            <dd>
              <RunLink id={run.parentId}>{run.parentId}</RunLink>
            </dd>
          </>
        )}
        <RerunLinks run={run} reruns={first.data?.reruns ?? []} />
        {run.idempotencyKey && (
          <>
            <dt>Idempotency key</dt>
            <dd>
              <code>{run.idempotencyKey}</code>
            </dd>
          </>
        )}
      </dl>

      {data.approvals.length > 0 && <Approvals runId={run.id} gates={data.approvals} now={now} onAnswered={reload} />}
      {!ended(run) && run.interpreter !== 'pipeline' && <SignalForm run={run} onSent={reload} />}

      {data.shape && <Shape shape={data.shape} />}
      {data.children.length > 0 && <Children runs={data.children} parent={run} />}
      {data.artifacts.length > 0 && <Artifacts runId={run.id} artifacts={data.artifacts} />}

      {loaded ? <Timeline run={run} entries={data.timeline} names={names} onRerun={rerun.busy ? undefined : rerun.rerun} /> : <Loading what="the timeline" />}
      <Log run={run} />
      <section aria-labelledby="io-title" class="io">
        <h2 id="io-title">Input and outputs</h2>
        <div class="io-grid">
          <div>
            <h3>Input</h3>
            <Value value={run.input} />
          </div>
          <div>
            <h3>Outputs</h3>
            {Object.keys(run.outputs).length === 0 ? (
              <p class="muted">
                None. A script sets them with <code>spool output set KEY VALUE</code>.
              </p>
            ) : (
              <table class="kv">
                <tbody>
                  {Object.entries(run.outputs).map(([key, value]) => (
                    <tr>
                      <th scope="row">{key}</th>
                      <td>
                        <Value value={value} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
          {annotations.length > 0 && (
            <div>
              <h3>Annotations</h3>
              <ul class="annotations">
                {annotations.map((entry) => (
                  <li>{entry.label}</li>
                ))}
              </ul>
            </div>
          )}
        </div>
      </section>

    </article>
  );
}

function CancelButton({ id, onDone }: { id: string; onDone: () => void }): JSX.Element {
  const [asking, setAsking] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="danger-outline" onClick={() => setAsking(true)}>
        Cancel run…
      </button>
    );
  }
  const cancel = async () => {
    setBusy(true);
    try {
      await api.post(`${runPath(id)}/cancel`);
      setAsking(false);
      onDone();
    } catch (error) {
      setFailure(error instanceof ApiError ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="confirm" role="group" aria-label="Cancel this run?">
      <span>Cancel this run? A pass under way is stopped, and the run never resumes.</span>
      <button type="button" class="danger" ref={confirm} disabled={busy} onClick={() => void cancel()}>
        Yes, cancel it
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
      {failure && (
        <span role="alert" class="form-error">
          {failure}
        </span>
      )}
    </div>
  );
}

/** The signal a run waits for, from its awaiting (`signal approve`), to fill in the name. */
const awaitedSignal = (run: Run): string => /^signal (\S+)/.exec(run.awaiting ?? '')?.[1] ?? '';

function SignalForm({ run, onSent }: { run: Run; onSent: () => void }): JSX.Element {
  const awaited = awaitedSignal(run);
  const [name, setName] = useState(awaited);
  const [payload, setPayload] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (awaited && !name) setName(awaited);
  }, [awaited]);

  const send = async (event: Event) => {
    event.preventDefault();
    let value: unknown = undefined;
    if (payload.trim()) {
      try {
        value = JSON.parse(payload) as unknown;
      } catch (error) {
        setMessage({ ok: false, text: `The payload is not JSON (${(error as Error).message}). Quote text: "like this".` });
        return;
      }
    }
    setBusy(true);
    try {
      await api.post(`${runPath(run.id)}/signals`, value === undefined ? { name } : { name, payload: value });
      setMessage({ ok: true, text: `Sent signal ${name}. The run takes it when it waits for ${name}; signals queue until then.` });
      setPayload('');
      onSent();
    } catch (error) {
      setMessage({ ok: false, text: error instanceof ApiError ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="signal-title" class="card">
      <h2 id="signal-title">Send a signal</h2>
      {awaited ? (
        <p>
          This run waits for the signal <code>{awaited}</code>.
        </p>
      ) : (
        <p class="muted">A signal queues until the run waits for one of its name (spool wait signal NAME).</p>
      )}
      <form class="signal-form" onSubmit={(event) => void send(event)}>
        <label>
          Name
          <input name="signal-name" required value={name} onInput={(event) => setName(event.currentTarget.value)} autoComplete="off" />
        </label>
        <label>
          Payload (JSON, optional)
          <textarea name="signal-payload" rows={2} value={payload} placeholder='{"approved": true}' onInput={(event) => setPayload(event.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy || !name}>
          Send signal
        </button>
      </form>
      <p aria-live="polite" class={message ? (message.ok ? 'form-ok' : 'form-error') : ''}>
        {message?.text}
      </p>
    </section>
  );
}

function Children({ runs, parent }: { runs: Run[]; parent: Run }): JSX.Element {
  const prefix = `${parent.workflow}#`;
  return (
    <section aria-labelledby="children-title">
      <h2 id="children-title">Runs this run started ({runs.length})</h2>
      <table class="children">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Job or workflow</th>
            <th scope="col">Phase</th>
            <th scope="col">Awaiting</th>
            <th scope="col">Took</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((child) => (
            <tr key={child.id}>
              <td>
                <RunName run={child} />
              </td>
              <td>{child.workflow.startsWith(prefix) ? child.workflow.slice(prefix.length) : child.workflow}</td>
              <td>
                <PhaseBadge phase={child.status} />
              </td>
              <td class="awaiting">
                <Awaiting text={child.awaiting} />
              </td>
              <td>{child.finishedAt ? <Duration ms={new Date(child.finishedAt).getTime() - new Date(child.createdAt).getTime()} /> : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Sizes as people read them: bytes, KiB, MiB, GiB. */
function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit] ?? ''}`;
}

/** The files the run stored (`spool artifact put`), each a download with the person's own authorization. */
function Artifacts({ runId, artifacts }: { runId: string; artifacts: Artifact[] }): JSX.Element {
  return (
    <section aria-labelledby="artifacts-title">
      <h2 id="artifacts-title">Artifacts ({artifacts.length})</h2>
      <table class="artifacts">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col">Type</th>
            <th scope="col">sha256</th>
          </tr>
        </thead>
        <tbody>
          {artifacts.map((artifact) => (
            <tr key={artifact.name}>
              <td>
                <a href={`/v1${runPath(runId)}/artifacts/${encodeURIComponent(artifact.name)}`} download>
                  {artifact.name}
                </a>
              </td>
              <td title={`${artifact.size} bytes`}>{formatBytes(artifact.size)}</td>
              <td>{artifact.contentType}</td>
              <td>
                <code title={artifact.sha256}>{artifact.sha256.slice(0, 12)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The run's log, every pass in order, following new lines while the run goes on. */
function Log({ run }: { run: Run }): JSX.Element {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const box = useRef<HTMLPreElement>(null);
  const state = useRef({ after: 0, ended: ended(run) });
  state.current.ended = ended(run);
  // Whether the box keeps to its last line: on until the person scrolls up, on again at the bottom.
  // Kept apart from the box, whose first lines arrive before it exists.
  const stick = useRef(true);

  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    state.current.after = 0;
    setLines([]);
    const poll = async () => {
      const endedBefore = state.current.ended;
      try {
        const { logs } = await api.get<ResponseOf<'GET /runs/:id/logs'>>(`${runPath(run.id)}/logs?after=${state.current.after}`);
        if (stopped) return;
        setError(null);
        if (logs.length > 0) {
          state.current.after = logs.at(-1)?.seq ?? state.current.after;
          setLines((old) => [...old, ...logs]);
        }
      } catch (caught) {
        if (!stopped) setError(caught instanceof ApiError ? caught : new ApiError(0, 'client', String(caught)));
      }
      // One more read after the run ended: its last words arrive before it settles.
      if (!stopped && !endedBefore) timer = window.setTimeout(() => void poll(), 1000);
    };
    void poll();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [run.id, ended(run)]);

  useEffect(() => {
    if (lines.length > 0 || ended(run)) performance.mark('spool:log-rendered');
  }, [lines.length > 0]);
  // After the new lines are in the box (the first batch included), follow them if it sticks.
  useLayoutEffect(() => {
    const element = box.current;
    if (element && stick.current) element.scrollTop = element.scrollHeight;
  }, [lines.length]);
  const onScroll = () => {
    const element = box.current;
    if (element) stick.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
  };

  const passes: { pass: number; text: string }[] = [];
  for (const line of lines) {
    const last = passes.at(-1);
    if (last && last.pass === line.pass) last.text += line.text;
    else passes.push({ pass: line.pass, text: line.text });
  }
  return (
    <section aria-labelledby="log-title">
      <div class="section-head">
        <h2 id="log-title">Log</h2>
        {!ended(run) && <span class="live">following</span>}
      </div>
      {error && <ErrorBox error={error} what="the log" />}
      {lines.length === 0 ? (
        <Empty title={ended(run) ? 'This run wrote nothing to its log.' : 'Nothing in the log yet.'}>
          {!ended(run) && <p>What the script prints shows here as it runs.</p>}
        </Empty>
      ) : (
        <pre class="log" ref={box} tabIndex={0} role="log" aria-label="Log of the run" onScroll={onScroll}>
          {passes.map((part) => (
            <>
              <span class="log-pass">— pass {part.pass} —{'\n'}</span>
              {part.text}
            </>
          ))}
        </pre>
      )}
    </section>
  );
}
