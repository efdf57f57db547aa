import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, type ResponseOf } from '../api.js';
import { RunLink } from '../components.js';
import { parseJson } from '../json-input.js';

type Answer = { ok: true; event: string; runs: string[] } | { ok: false; text: string };

/**
 * Emits an event (`POST /v1/events`) as `spool event emit` does: a type, an optional subject and
 * id (a second emit with the same id is the same event), a JSON payload. It says which runs the
 * event's handlers started; runs waiting for it (`spool wait event`) take it as they poll.
 */
export function EmitEvent(): JSX.Element {
  const [type, setType] = useState('');
  const [subject, setSubject] = useState('');
  const [id, setId] = useState('');
  const [payload, setPayload] = useState('');
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Answer | null>(null);

  const emit = async () => {
    const parsed = parseJson(payload);
    if ('problem' in parsed) {
      setAnswer({ ok: false, text: `The payload is ${parsed.problem}` });
      return;
    }
    setBusy(true);
    try {
      const body = { type, payload: parsed.value, ...(subject ? { subject } : {}), ...(id ? { id } : {}) };
      const { event, runs } = await api.post<ResponseOf<'POST /events'>>('/events', body);
      setAnswer({ ok: true, event: event.id, runs });
    } catch (error) {
      setAnswer({ ok: false, text: error instanceof ApiError ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <details class="card emit-event">
      <summary>Emit an event</summary>
      <form
        class="signal-form"
        onSubmit={(event) => {
          event.preventDefault();
          void emit();
        }}
      >
        <label>
          Type
          <input name="type" required value={type} onInput={(event) => setType(event.currentTarget.value)} placeholder="order.paid" />
        </label>
        <label>
          Subject (optional)
          <input name="subject" value={subject} onInput={(event) => setSubject(event.currentTarget.value)} />
        </label>
        <label>
          Id (optional; the same id twice is one event)
          <input name="id" value={id} onInput={(event) => setId(event.currentTarget.value)} />
        </label>
        <label>
          Payload (JSON)
          <textarea name="payload" rows={3} value={payload} onInput={(event) => setPayload(event.currentTarget.value)} placeholder='{"order": "A-17"}' />
        </label>
        <button type="submit" disabled={busy}>
          Emit
        </button>
      </form>
      <div role="status">
        {answer?.ok === false && <p class="form-error">{answer.text}</p>}
        {answer?.ok === true && (
          <p class="form-ok event-answer">
            Emitted {answer.event}.{' '}
            {answer.runs.length === 0 ? (
              'No handler takes this type, so it started no run; a run waiting for it takes it all the same.'
            ) : (
              <>
                It started{' '}
                {answer.runs.map((run, index) => (
                  <>
                    {index > 0 && ', '}
                    <RunLink id={run} />
                  </>
                ))}
                .
              </>
            )}
          </p>
        )}
      </div>
    </details>
  );
}
