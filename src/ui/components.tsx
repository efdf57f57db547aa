import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { runPath, type ApiError, type Phase, type Run } from './api.js';
import { formatDuration, formatFullTime, formatRelative, formatTime } from './format.js';
import { headingTakesFocus, Link } from './router.js';

const PHASE_LABEL: Record<Phase, string> = {
  pending: 'Pending',
  running: 'Running',
  waiting: 'Waiting',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const PHASE_MARK: Record<Phase, string> = { pending: '○', running: '◐', waiting: '◷', succeeded: '✓', failed: '✕', cancelled: '⊘' };

/** A phase as a badge: a mark and a word, so it does not rest on colour alone. */
export function PhaseBadge({ phase }: { phase: Phase }): JSX.Element {
  return (
    <span class={`phase phase-${phase}`} data-phase={phase}>
      <span aria-hidden="true">{PHASE_MARK[phase]}</span> {PHASE_LABEL[phase]}
    </span>
  );
}

/** A time in the viewer's zone; hovering (or a screen reader) gives the full date and zone. */
export function Time({ iso, relative = false, now }: { iso: string; relative?: boolean; now?: number }): JSX.Element {
  return (
    <time dateTime={iso} title={formatFullTime(iso)}>
      {relative ? formatRelative(iso, now) : formatTime(iso)}
    </time>
  );
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;

/** What a run awaits (`timer 2026-12-06T09:00:00.000Z`, `signal approve`), its times in the viewer's zone and UTC in their title. */
export function Awaiting({ text }: { text: string | null }): JSX.Element {
  const parts: ComponentChildren[] = [];
  let at = 0;
  for (const match of (text ?? '').matchAll(ISO_TIME)) {
    parts.push(text?.slice(at, match.index));
    parts.push(
      <time dateTime={match[0]} title={`${match[0].slice(0, 19).replace('T', ' ')} UTC`}>
        {formatTime(match[0])}
      </time>,
    );
    at = match.index + match[0].length;
  }
  parts.push(text?.slice(at));
  return <>{parts}</>;
}

export function Duration({ ms }: { ms: number }): JSX.Element {
  return <span class="duration">{formatDuration(ms)}</span>;
}

/** The short form of a run id (`run-…`), the whole id in its title and its address. */
export function RunLink({ id, children }: { id: string; children?: ComponentChildren }): JSX.Element {
  return (
    <Link href={runPath(id)} class="run-id" title={id}>
      {children ?? id.split(':').at(-1)}
    </Link>
  );
}

/**
 * A run in a list: by its Run's name on a cluster (what `kubectl get runs` shows), with its key
 * beside it, smaller, as the pods' labels and the store name it; by its key elsewhere.
 */
export function RunName({ run }: { run: Pick<Run, 'id' | 'resource'> }): JSX.Element {
  if (!run.resource) return <RunLink id={run.id} />;
  return (
    <>
      <RunLink id={run.id}>{run.resource.name}</RunLink> <span class="run-key">{run.id.split(':').at(-1)}</span>
    </>
  );
}

/** Nothing to show yet, and what to do about it. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }): JSX.Element {
  return (
    <div class="empty" role="status">
      <p class="empty-title">{title}</p>
      {children && <div class="empty-hint">{children}</div>}
    </div>
  );
}

/** Why the page cannot show what it should, and what a person can do. */
export function ErrorBox({ error, what }: { error: ApiError; what: string }): JSX.Element {
  const hint =
    error.status === 0
      ? 'Check that the server is running; this page retries on its own.'
      : error.status === 401
        ? 'Your credentials were not accepted. On a cluster, open the UI with `spool ui`, which acts as your kubeconfig’s user.'
        : error.status === 403
          ? 'Ask for access (the view or edit role in this namespace: Kubernetes RBAC on api.hyperspool.dev), or open another namespace with `spool ui -n`.'
          : error.status === 404
            ? 'Check the address; the run may belong to another project or namespace.'
            : 'Try again; if it persists, the server’s log has the details.';
  return (
    <div class="error" role="alert">
      <p>
        <strong>Could not load {what}:</strong> {error.message}
      </p>
      <p class="error-hint">{hint}</p>
    </div>
  );
}

export function Loading({ what }: { what: string }): JSX.Element {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** A value of any shape, as text; JSON pretty-printed. */
export function Value({ value }: { value: unknown }): JSX.Element {
  if (value === null || value === undefined) return <span class="muted">none</span>;
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  // The block scrolls when the value is long (style.css): tabIndex lets a keyboard reach it to scroll
  // (WCAG 2.1.1; axe-core's scrollable-region-focusable).
  return text.includes('\n') || text.length > 80 ? (
    <pre class="value" tabIndex={0}>
      {text}
    </pre>
  ) : (
    <code class="value">{text}</code>
  );
}

/** A page's title line, which also names the browser tab; after an in-app navigation it takes the keyboard focus. */
export function Title({ children, text }: { children: ComponentChildren; text: string }): JSX.Element {
  document.title = `${text} · Hyperspool`;
  const heading = useRef<HTMLHeadingElement>(null);
  const drawn = useRef(false);
  useEffect(() => {
    if (headingTakesFocus(!drawn.current)) heading.current?.focus({ preventScroll: true });
    drawn.current = true;
  });
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}

export function Code({ children }: { children: ComponentChildren }): JSX.Element {
  return <code class="command">{children}</code>;
}
