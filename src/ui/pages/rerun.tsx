import type { JSX } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { api, ApiError, runPath, type ResponseOf, type Run } from '../api.js';
import { RunLink } from '../components.js';
import { navigate } from '../router.js';

/**
 * Rerun (`POST /v1/runs/:id/rerun`, docs/testing-workflows.md): a new run of this run's script, from
 * the top or from a step, whose page opens once it is made. A refusal is shown where it was asked.
 */
export function useRerun(id: string): { rerun: (fromStep: string | null) => void; busy: boolean; failure: string | null } {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  // The same function while the page shows one run: the timeline's slices redraw only when it changes.
  const rerun = useCallback((fromStep: string | null): void => {
    setBusy(true);
    setFailure(null);
    api
      .post<ResponseOf<'POST /runs/:id/rerun'>>(`${runPath(id)}/rerun`, fromStep === null ? {} : { fromStep })
      .then(({ run }) => navigate(runPath(run.id)))
      .catch((error: unknown) => setFailure(error instanceof ApiError ? error.message : String(error)))
      .finally(() => setBusy(false));
  }, [id]);
  return { rerun, busy, failure };
}

/** The summary's lines linking a rerun to its source and a run to its reruns. */
export function RerunLinks({ run, reruns }: { run: Run; reruns: string[] }): JSX.Element {
  return (
    <>
      {run.rerunOf && (
        <>
          <dt>Rerun of</dt>
          <dd class="rerun-of">
            <RunLink id={run.rerunOf.runId} />
            {run.rerunOf.fromStep === null ? ', from the top' : <>, from step <code>{run.rerunOf.fromStep}</code></>}
          </dd>
        </>
      )}
      {reruns.length > 0 && (
        <>
          <dt>Reruns</dt>
          <dd class="reruns">
            {reruns.map((rerun, index) => (
              <>
                {index > 0 && ', '}
                <RunLink id={rerun} />
              </>
            ))}
          </dd>
        </>
      )}
    </>
  );
}
