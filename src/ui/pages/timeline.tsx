import { Component, type JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { RERUN_FROM_VERBS } from '../../api/rerun-from.js';
import type { Run, TimelineEntry } from '../api.js';
import { Empty, RunLink, Value } from '../components.js';
import { formatClock, formatDuration, formatFullTime, plural } from '../format.js';

const firstLine = (text: string): string => {
  const line = text.split('\n').find((part) => part.trim() !== '') ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
};

const short = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

/** What a call came to, in a few words: an exit code and the first line of its output, a payload, a run. */
function Outcome({ entry, run, names }: { entry: TimelineEntry; run: Run; names: Names }): JSX.Element {
  const { result, call } = entry;
  if (!result) {
    const open = !['succeeded', 'failed', 'cancelled'].includes(run.status);
    return <span class="muted">{open ? (run.status === 'waiting' ? 'waiting' : 'under way') : 'no result recorded'}</span>;
  }
  if (entry.timedOut) return <span class="timed-out">timed out</span>;
  const runs = entry.runIds.length > 0 && (
    <span class="runs-links">
      {entry.runIds.slice(0, 5).map((id) => (
        <ChildLink id={id} name={names.get(id) ?? calledWorkflow(entry)} />
      ))}
      {entry.runIds.length > 5 && ` and ${entry.runIds.length - 5} more`}
    </span>
  );
  if (entry.exitCode !== null) {
    const stdout = typeof result.stdout === 'string' ? firstLine(result.stdout) : '';
    // A failed command's stderr tail (kept beside its result): its last line says why, the whole in its title.
    const stderr = typeof result.stderrTail === 'string' ? result.stderrTail : '';
    return (
      <>
        <span class={entry.failed ? 'exit exit-failed' : 'exit'}>{`exit ${entry.exitCode}`}</span>
        {stderr ? (
          <span class="stderr-tail" title={stderr}>
            {` ${stderr.split('\n').at(-1) ?? ''}`}
          </span>
        ) : stdout ? (
          ` ${stdout}`
        ) : null}
      </>
    );
  }
  switch (entry.verb) {
    case 'sleep':
      return <span>until {typeof call?.until === 'string' ? <time dateTime={call.until}>{formatClock(call.until)}</time> : '?'}</span>;
    case 'wait.signal':
      return <span>payload {result.payload === '' ? <span class="muted">(none)</span> : <code>{short(result.payload)}</code>}</span>;
    case 'wait.event': {
      const event = result.event as { type?: string; subject?: string | null } | undefined;
      return <span>event {event?.type}{event?.subject ? ` (${event.subject})` : ''}</span>;
    }
    case 'wait.children':
      return (
        <span>
          {runs} {typeof result.status === 'string' ? result.status : ''}
        </span>
      );
    case 'output.set':
      return <code>{short(call?.value)}</code>;
    case 'annotate':
      return <span>{entry.label}</span>;
    case 'step_fn':
      return <code>{short(result.value)}</code>;
    default:
      if (runs) return runs;
      return Object.keys(result).length ? <code>{short(result)}</code> : <span class="muted">done</span>;
  }
}

/** Child runs' workflows by run id (the run page's list of the runs this run started). */
type Names = ReadonlyMap<string, string>;

/** The workflow a spawn or call started, as its call recorded it (`workflow`); its journal name is empty. */
const calledWorkflow = (entry: TimelineEntry): string => (typeof entry.call?.workflow === 'string' ? entry.call.workflow : '');

/** A child run told apart from its siblings: its workflow (a job's name for a pipeline's job) and its short id. */
function ChildLink({ id, name }: { id: string; name: string }): JSX.Element {
  const short = id.split(':').at(-1);
  return <RunLink id={id}>{name ? `${name.replace(/^[^#]*#/, '')} · ${short}` : short}</RunLink>;
}

interface SliceProps {
  entries: TimelineEntry[];
  run: Run;
  start: number;
  span: number;
  open: Set<number>;
  names: Names;
  /** When the lines were drawn: a call under way shows how long it has run. */
  now: number;
  toggle: (position: number) => void;
  /** Rerun from a step (run.tsx); absent while a rerun is being made. */
  onRerun: ((step: string) => void) | undefined;
}

/** The calls a rerun can start from (engine/rerun.ts): a step's or an activity's first call. */
const rerunsFrom = (entry: TimelineEntry): boolean => RERUN_FROM_VERBS.includes(entry.verb) && entry.occurrence === 0;

/**
 * One slice of the timeline's lines. It draws again only when its own entries, the run's span or
 * the open details change, so adding a slice below does not redraw the lines above it.
 */
class TimelineSlice extends Component<SliceProps> {
  override shouldComponentUpdate(next: SliceProps): boolean {
    const now = this.props;
    return next.entries !== now.entries || next.names !== now.names || next.onRerun !== now.onRerun || next.span !== now.span || next.start !== now.start || next.open !== now.open || next.run.status !== now.run.status || next.run.passes !== now.run.passes;
  }

  override render(): JSX.Element {
    const { entries, run, start, span, open, names, now, toggle, onRerun } = this.props;
    const running = !['succeeded', 'failed', 'cancelled'].includes(run.status);
    return (
      <>
        {entries.map((entry) => {
              const began = entry.startedAt ? new Date(entry.startedAt).getTime() : null;
              const replayed = entry.pass !== null && entry.pass < run.passes;
              const expanded = open.has(entry.position);
              const rowClass = entry.failed ? 'failed' : entry.timedOut ? 'timed-out-row' : '';
              return (
                <>
                  <tr key={entry.position} class={rowClass} data-verb={entry.verb} data-name={entry.name}>
                    <td class="num">{entry.position}</td>
                    <td class={`call${entry.failed ? ' call-failed' : entry.result ? '' : ' call-open'}`}>
                      {entry.failed ? <span class="visually-hidden">failed: </span> : null}
                      <span class="verb">{entry.verb}</span> <b>{entry.name || calledWorkflow(entry)}</b>
                      {entry.label && entry.verb !== 'annotate' ? ` (${entry.label})` : null}
                    </td>
                    <td class="when">{entry.startedAt ? `+${formatDuration(Math.max(0, (began ?? start) - start))}` : ''}</td>
                    <td class="bar-col" aria-hidden="true">
                      {began !== null && (
                        <span
                          class={entry.failed ? 'bar bar-failed' : 'bar'}
                          style={{ left: `${((began - start) / span) * 100}%`, width: `${Math.max(((entry.durationMs ?? 0) / span) * 100, 0.6)}%` }}
                        />
                      )}
                    </td>
                    <td class="took">
                      {entry.durationMs !== null ? formatDuration(entry.durationMs) : running && !entry.result && began !== null ? <span class="elapsed" title="under way for">{formatDuration(Math.max(0, now - began))}…</span> : ''}
                    </td>
                    <td class="result">
                      <Outcome entry={entry} run={run} names={names} />
                    </td>
                    <td class="pass" title={entry.pass === null ? undefined : replayed ? `recorded in pass ${entry.pass}; later passes replayed it` : `recorded in pass ${entry.pass}`}>
                      {entry.pass === null ? '' : replayed ? `${entry.pass} · replayed` : entry.pass}
                    </td>
                    <td class="row-actions">
                      {rerunsFrom(entry) && (
                        <button type="button" class="link-button" disabled={!onRerun} onClick={() => onRerun?.(entry.name)} title={`A new run that keeps this run's calls before ${entry.name} and runs ${entry.name} and all after again`}>
                          Rerun from here
                        </button>
                      )}
                      <button type="button" class="link-button" aria-expanded={expanded} aria-label={`details of call ${entry.position}`} onClick={() => toggle(entry.position)}>
                        {expanded ? '▾' : '▸'}
                      </button>
                    </td>
                  </tr>
                  {expanded && (
                    <tr class="details-row">
                      <td />
                      <td colSpan={7}>
                        {entry.startedAt && (
                          <p class="muted">
                            Began {formatFullTime(entry.startedAt)}
                            {entry.endedAt && <>, ended {formatFullTime(entry.endedAt)}</>}.
                          </p>
                        )}
                        <Value value={{ call: entry.call, result: entry.result }} />
                      </td>
                    </tr>
                  )}
                </>
              );
        })}
      </>
    );
  }
}

const FIRST_SLICE = 60;
const SLICE = 120;

/**
 * The journal as a timeline, after Temporal's compact history: one line per durable call, where it
 * sits in the run's span as a bar, what it came to, and the pass that recorded it (later passes
 * replayed it). Failed calls are marked, so a run of 500 calls is read at a glance.
 */
export function Timeline({ run, entries, names, onRerun }: { run: Run; entries: TimelineEntry[]; names: Names; onRerun?: ((step: string) => void) | undefined }): JSX.Element {
  const [open, setOpen] = useState<Set<number>>(new Set());
  const [failedOnly, setFailedOnly] = useState(false);
  const failed = entries.filter((entry) => entry.failed).length;
  const start = new Date(run.createdAt).getTime();
  const lastEnd = Math.max(start + 1, ...entries.map((entry) => new Date(entry.endedAt ?? entry.startedAt ?? run.createdAt).getTime()));
  const end = Math.max(lastEnd, run.finishedAt ? new Date(run.finishedAt).getTime() : lastEnd);
  const span = end - start;
  const matching = useMemo(() => (failedOnly ? entries.filter((entry) => entry.failed || entry.timedOut) : entries), [entries, failedOnly]);
  // A long journal is drawn a screenful first and the rest in slices, each its own task: the page
  // answers clicks and keys while the lines below the fold are still being added.
  const [drawn, setDrawn] = useState(FIRST_SLICE);
  useEffect(() => {
    if (drawn >= matching.length) {
      performance.mark('spool:timeline-complete');
      return;
    }
    const timer = window.setTimeout(() => setDrawn((count) => count + SLICE), 0);
    return () => window.clearTimeout(timer);
  }, [drawn, matching.length]);
  // The same slices (the same arrays) from one drawing to the next, so a drawn slice is left alone.
  const allSlices = useMemo(() => {
    const cut: TimelineEntry[][] = [matching.slice(0, FIRST_SLICE)];
    for (let at = FIRST_SLICE; at < matching.length; at += SLICE) cut.push(matching.slice(at, at + SLICE));
    return cut;
  }, [matching]);
  const slices = allSlices.slice(0, 1 + Math.max(0, Math.ceil((drawn - FIRST_SLICE) / SLICE)));
  const toggle = (position: number) =>
    setOpen((old) => {
      const next = new Set(old);
      if (next.has(position)) next.delete(position);
      else next.add(position);
      return next;
    });

  return (
    <section aria-labelledby="timeline-title">
      <div class="section-head">
        <h2 id="timeline-title">Timeline</h2>
        <p class="muted timeline-summary">
          {plural(entries.length, 'durable call')}
          {failed > 0 && (
            <>
              {' · '}
              <span class="exit-failed">{failed} failed</span>
            </>
          )}
          {' · '}
          {plural(run.passes, 'pass', 'passes')}
        </p>
        {failed > 0 && (
          <label class="check">
            <input type="checkbox" checked={failedOnly} onChange={(event) => setFailedOnly(event.currentTarget.checked)} /> failed only
          </label>
        )}
      </div>
      {entries.length === 0 ? (
        <Empty title="No durable calls yet.">
          <p>Each spool step, sleep, wait, lock or spawn the script reaches shows here as it is recorded.</p>
        </Empty>
      ) : (
        <table class="timeline">
          <caption class="visually-hidden">The run’s durable calls in the order the script reached them</caption>
          <colgroup>
            <col class="col-position" />
            <col class="col-call" />
            <col class="col-when" />
            <col class="bar-col" />
            <col class="col-took" />
            <col />
            <col class="col-pass" />
            <col class="col-details" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col" class="num">#</th>
              <th scope="col">Call</th>
              <th scope="col" class="col-when">
                When
              </th>
              {/* Out of the accessibility tree as its cells are (the When column says it in words), so each cell keeps its column's header. */}
              <th scope="col" class="bar-col" aria-hidden="true">
                <span class="visually-hidden">Where in the run</span>
              </th>
              <th scope="col">Took</th>
              <th scope="col">Result</th>
              <th scope="col" class="col-pass">
                Pass
              </th>
              <th scope="col">
                <span class="visually-hidden">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {slices.map((slice) => (
              <TimelineSlice key={slice[0]?.position} entries={slice} run={run} start={start} span={span} open={open} names={names} now={Date.now()} toggle={toggle} onRerun={onRerun} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
