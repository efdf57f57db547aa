import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, runPath, type FormField, type Gate } from '../api.js';
import { RunLink, Time } from '../components.js';
import { formatDuration } from '../format.js';
import { approvalCount } from '../../api/approval-count.js';

export type Values = Record<string, string | number | boolean>;

/** A form's values before anyone types: each field's default, or empty. */
export function initial(form: FormField[]): Values {
  const values: Values = {};
  for (const field of form) values[field.name] = field.default ?? (field.type === 'boolean' ? false : '');
  return values;
}

/** One typed field (string, number with bounds, boolean, a choice of options), labelled, marked when required. */
export function Field({ field, gateRun, value, onChange }: { field: FormField; gateRun: string; value: string | number | boolean; onChange: (value: string | number | boolean) => void }): JSX.Element {
  // By the gate's run too: the Approvals page shows the forms of many gates at once.
  const id = `field-${gateRun}-${field.name}`;
  const label = (
    <>
      {field.label}
      {field.required && <span class="required"> (required)</span>}
    </>
  );
  if (field.type === 'boolean') {
    return (
      <label class="check" for={id}>
        <input id={id} name={field.name} type="checkbox" checked={value === true} onChange={(event) => onChange(event.currentTarget.checked)} /> {label}
      </label>
    );
  }
  return (
    <label for={id}>
      {label}
      {field.options ? (
        <select id={id} name={field.name} required={field.required} value={String(value)} onChange={(event) => onChange(event.currentTarget.value)}>
          {!field.required && <option value="">—</option>}
          {field.options.map((option) => (
            <option value={option}>{option}</option>
          ))}
        </select>
      ) : (
        field.type === 'number' ? (
          <input id={id} name={field.name} type="number" step="any" min={field.min ?? undefined} max={field.max ?? undefined} required={field.required} value={String(value)} onInput={(event) => onChange(event.currentTarget.value)} />
        ) : (
          <input id={id} name={field.name} type="text" required={field.required} value={String(value)} onInput={(event) => onChange(event.currentTarget.value)} />
        )
      )}
    </label>
  );
}

/** A waiting gate's form, Approve and Reject… (which asks once more), and how long it has waited. */
export function WaitingGate({ runId, gate, now, onAnswered }: { runId: string; gate: Gate; now: number; onAnswered: () => void }): JSX.Element {
  const [values, setValues] = useState<Values>(() => initial(gate.form));
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  // Rejecting cancels the whole run, so it asks once more, as Cancel run does.
  const [rejecting, setRejecting] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (rejecting) confirm.current?.focus();
  }, [rejecting]);

  const answer = async (decision: 'approve' | 'reject') => {
    setBusy(true);
    setFailure(null);
    try {
      await api.post(`${runPath(runId)}/approvals/${encodeURIComponent(gate.job)}`, decision === 'approve' ? { decision, values, via: 'page' } : { decision, via: 'page' });
      onAnswered();
    } catch (error) {
      setFailure(error instanceof ApiError ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="gate-form"
      onSubmit={(event) => {
        event.preventDefault();
        void answer('approve');
      }}
    >
      {gate.form.length > 0 && (
        <fieldset>
          <legend>Fill in to approve</legend>
          {gate.form.map((field) => (
            <Field field={field} gateRun={gate.runId} value={values[field.name] ?? ''} onChange={(value) => setValues({ ...values, [field.name]: value })} />
          ))}
        </fieldset>
      )}
      {rejecting ? (
        <div class="buttons confirm-reject" role="group" aria-label="Reject this approval?">
          <span>Reject? The whole run is cancelled, and it never resumes.</span>
          <button type="button" class="danger" ref={confirm} disabled={busy} onClick={() => void answer('reject')}>
            Yes, reject
          </button>
          <button type="button" onClick={() => setRejecting(false)}>
            Keep waiting
          </button>
        </div>
      ) : (
        <div class="buttons">
          <button type="submit" class="approve" disabled={busy}>
            Approve
          </button>
          <button type="button" class="danger-outline" disabled={busy} onClick={() => setRejecting(true)}>
            Reject…
          </button>
          <span class="muted">Rejecting cancels the whole run.</span>
        </div>
      )}
      {failure && (
        <p role="alert" class="form-error">
          {failure}
        </p>
      )}
      <p class="muted">
        Waiting since <Time iso={gate.since} relative now={now} />
        {gate.deadline ? (
          <>
            ; without an answer it times out <Time iso={gate.deadline} relative now={now} /> (<Time iso={gate.deadline} />) and the run goes on with <code>timed_out</code>.
          </>
        ) : (
          '; it has no timeout.'
        )}
      </p>
    </form>
  );
}

/** The answers up to the one that decided the gate (all while it waits); those after it were refused. */
function counted(gate: Gate): Gate['answers'] {
  const end = gate.answers.findIndex((answer) => answer.final);
  return end === -1 ? gate.answers : gate.answers.slice(0, end + 1);
}

/** A gate with approvers: how far it has got, and who may still answer while it waits. */
export function ApprovalProgress({ gate }: { gate: Gate & { approvers: NonNullable<Gate['approvers']> } }): JSX.Element {
  const approvals = counted(gate).filter((answer) => answer.decision === 'approve');
  const answered = new Set(approvals.map((answer) => answer.by));
  const left = gate.approvers.from.filter((each) => !answered.has(each)).map((each) => (each.startsWith('group:') ? `anyone in ${each.slice('group:'.length)}` : each));
  return (
    <p class="gate-count">
      <strong>{approvals.length > 0 ? approvalCount({ counted: approvals.length, needed: gate.approvers.count, by: approvals.map((answer) => answer.by) }) : `0 of ${gate.approvers.count} approvals`}</strong>
      {gate.state === 'waiting' && (
        <>
          {' · '}
          {left.length > 0 ? `still to answer: ${left.join(', ')}` : 'nobody left to answer'}; each person answers once, and whoever submitted the run may not approve it.
        </>
      )}
    </p>
  );
}

const STATE_TEXT: Record<Gate['state'], string> = {
  waiting: 'Waiting for an answer',
  approved: 'Approved',
  rejected: 'Rejected',
  timed_out: 'No answer in time',
  cancelled: 'Cancelled with the run',
  failed: 'Failed',
};

/** The run's approval gates: the prompt, a form and Approve and Reject while one waits; who answered and how after. */
export function Approvals({ runId, gates, now, onAnswered }: { runId: string; gates: Gate[]; now: number; onAnswered: () => void }): JSX.Element {
  return (
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title">Approvals</h2>
      {gates.map((gate) => (
        <div class={`card gate gate-${gate.state}`} data-gate={gate.job} key={gate.runId}>
          <h3>
            {gate.prompt} <span class="muted gate-job">job {gate.job}</span>
          </h3>
          <p class="gate-state">
            <strong>{STATE_TEXT[gate.state]}</strong>
            {gate.answeredBy && <> by {gate.answeredBy}</>}
            {gate.answeredAt && (
              <>
                {' '}
                <Time iso={gate.answeredAt} relative now={now} />
              </>
            )}
            {gate.state === 'timed_out' && gate.timeoutMs !== null && <> (it waited {formatDuration(gate.timeoutMs)})</>}
            {' · '}
            <RunLink id={gate.runId}>gate run</RunLink>
          </p>
          {gate.values && Object.keys(gate.values).length > 0 && (
            <dl class="summary">
              {Object.entries(gate.values).map(([name, value]) => (
                <>
                  <dt>{gate.form.find((field) => field.name === name)?.label ?? name}</dt>
                  <dd>{String(value)}</dd>
                </>
              ))}
            </dl>
          )}
          {gate.approvers && <ApprovalProgress gate={{ ...gate, approvers: gate.approvers }} />}
          {(gate.answers?.length ?? 0) > (gate.approvers ? 0 : 1) && (
            <ul class="gate-answers" aria-label="Every answer">
              {gate.answers?.map((answer, index) => (
                <li key={answer.at}>
                  {answer.decision === 'approve' ? 'Approve' : 'Reject'} by {answer.by ?? 'someone'} ({answer.via}) <Time iso={answer.at} relative now={now} />
                  {answer.final ? ' — final' : index < counted(gate).length ? ' — counted' : gate.approvers ? ' — refused: the gate was already answered' : ' — refused: the first answer is final'}
                </li>
              ))}
            </ul>
          )}
          {gate.state === 'waiting' && <WaitingGate runId={runId} gate={gate} now={now} onAnswered={onAnswered} />}
        </div>
      ))}
    </section>
  );
}
