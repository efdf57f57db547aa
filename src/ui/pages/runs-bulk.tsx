import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, runPath, type ResponseOf, type Run } from '../api.js';
import { RunLink } from '../components.js';

/**
 * Acting on several runs of the runs list at once: a checkbox per row, one for the whole page, and a
 * bar with Cancel (asked twice, as a run page's Cancel is) and Rerun. Each run is asked on its own
 * through the same routes a run's page uses, so each gets its own answer: one that had already ended
 * is not cancelled, and says so, while the others are.
 */

export interface Selection {
  chosen: ReadonlySet<string>;
  toggle: (id: string, on: boolean) => void;
  setAll: (on: boolean) => void;
}

/** The runs chosen on this page; a new page (another filter, an older page) starts with none. */
export function useSelection(shown: readonly string[], pageKey: string): Selection {
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => setChosen(new Set()), [pageKey]);
  return {
    // Only runs still on the page count: the first page follows new runs, and one may scroll off it.
    chosen: new Set(shown.filter((id) => chosen.has(id))),
    toggle: (id, on) =>
      setChosen((before) => {
        const after = new Set(before);
        if (on) after.add(id);
        else after.delete(id);
        return after;
      }),
    setAll: (on) => setChosen(new Set(on ? shown : [])),
  };
}

const shortId = (id: string): string => id.split(':').at(-1) ?? id;

/** A row's checkbox, named after its run for a screen reader. */
export function RowCheck({ id, selection }: { id: string; selection: Selection }): JSX.Element {
  return (
    <input
      type="checkbox"
      class="pick"
      aria-label={`Select run ${shortId(id)}`}
      checked={selection.chosen.has(id)}
      onChange={(event) => selection.toggle(id, event.currentTarget.checked)}
    />
  );
}

/** What one action did to one run. */
interface Outcome {
  id: string;
  ok: boolean;
  text: string;
  rerun?: string;
}

type Action = 'cancel' | 'rerun';

async function act(action: Action, id: string): Promise<Outcome> {
  try {
    if (action === 'rerun') {
      const { run } = await api.post<ResponseOf<'POST /runs/:id/rerun'>>(`${runPath(id)}/rerun`, {});
      return { id, ok: true, text: 'rerun as', rerun: run.id };
    }
    const { run, cancelled } = await api.post<ResponseOf<'POST /runs/:id/cancel'>>(`${runPath(id)}/cancel`);
    return cancelled
      ? { id, ok: true, text: 'cancelled' }
      : { id, ok: false, text: `not cancelled: it had already ended (${run.status})` };
  } catch (error) {
    return { id, ok: false, text: error instanceof ApiError ? error.message : String(error) };
  }
}

/** The page's select-all, how many are chosen, the two actions, and what each did to each run. */
export function BulkBar({
  runs,
  selection,
  onDone,
}: {
  runs: Run[];
  selection: Selection;
  onDone: () => void;
}): JSX.Element {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcomes, setOutcomes] = useState<{ action: Action; each: Outcome[] } | null>(null);
  const all = useRef<HTMLInputElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const count = selection.chosen.size;
  useEffect(() => {
    if (all.current) all.current.indeterminate = count > 0 && count < runs.length;
  });
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);

  const run = async (action: Action) => {
    setBusy(true);
    setAsking(false);
    // In the list's order, whatever order the answers come back in.
    const ids = runs.map((each) => each.id).filter((id) => selection.chosen.has(id));
    const each = await Promise.all(ids.map((id) => act(action, id)));
    setOutcomes({ action, each });
    setBusy(false);
    selection.setAll(false);
    onDone();
  };

  return (
    <div class="bulk" role="region" aria-label="Act on the chosen runs">
      <div class="buttons">
        <label class="check">
          <input
            ref={all}
            type="checkbox"
            checked={count > 0 && count === runs.length}
            onChange={(event) => selection.setAll(event.currentTarget.checked)}
          />{' '}
          Select all {runs.length} on this page
        </label>
        <span class="bulk-count" aria-live="polite">
          {count === 0 ? 'None selected' : `${count} selected`}
        </span>
        {count > 0 && !asking && (
          <>
            <button type="button" class="danger-outline" disabled={busy} onClick={() => setAsking(true)}>
              Cancel {count}…
            </button>
            <button type="button" disabled={busy} onClick={() => void run('rerun')}>
              Rerun {count}
            </button>
          </>
        )}
        {count > 0 && asking && (
          <div class="confirm" role="group" aria-label="Cancel the chosen runs?">
            <span>
              Cancel {count === 1 ? 'this run' : `these ${count} runs`}? Passes under way are stopped, and they never
              resume.
            </span>
            <button type="button" class="danger" ref={confirm} onClick={() => void run('cancel')}>
              Yes, cancel {count === 1 ? 'it' : 'them'}
            </button>
            <button type="button" onClick={() => setAsking(false)}>
              Keep them
            </button>
          </div>
        )}
      </div>
      <div role="status">
        {outcomes && (
          <ul class="bulk-outcomes" aria-label={outcomes.action === 'cancel' ? 'What Cancel did' : 'What Rerun did'}>
            {outcomes.each.map((outcome) => (
              <li key={outcome.id} data-run={outcome.id} class={outcome.ok ? 'form-ok' : 'form-error'}>
                <RunLink id={outcome.id} />: {outcome.text}
                {outcome.rerun && (
                  <>
                    {' '}
                    <RunLink id={outcome.rerun} />
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
