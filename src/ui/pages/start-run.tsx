import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, runPath, type FormField, type ResponseOf } from '../api.js';
import { ErrorBox, Loading } from '../components.js';
import { parseJson } from '../json-input.js';
import { navigate } from '../router.js';
import { Field, initial, type Values } from './approvals.js';

/** The run's input from a typed form: numbers as numbers; a field left empty is left out, so its default applies. */
function inputOf(form: FormField[], values: Values): Record<string, string | number | boolean> {
  const input: Record<string, string | number | boolean> = {};
  for (const field of form) {
    const value = values[field.name];
    if (value === undefined || value === '') continue;
    input[field.name] = field.type === 'number' && typeof value === 'string' ? Number(value) : value;
  }
  return input;
}

/** The first field the browser finds wrong (required, out of bounds), said in one line with its label. */
function invalidField(form: HTMLFormElement): string | null {
  for (const element of Array.from(form.elements)) {
    if (!(element instanceof HTMLInputElement || element instanceof HTMLSelectElement || element instanceof HTMLTextAreaElement) || element.validity.valid) continue;
    const label = element.labels?.[0]?.textContent?.replace(' (required)', '').trim() ?? element.name;
    element.focus();
    return `${label}: ${element.validationMessage}`;
  }
  return null;
}

/** What opens Start run for a workflow: on the Workflows page (a row each) and on the workflow's own page. */
export function StartRunButton({ name, onClick }: { name: string; onClick: () => void }): JSX.Element {
  return (
    <button type="button" onClick={onClick}>
      Start run…<span class="visually-hidden"> ({name})</span>
    </button>
  );
}

/**
 * Start run on the Workflows page and a workflow's own page: a new run of a workflow as its last run ran it, submitted through
 * `POST /v1/runs`, with a form its declared inputs make (a graph's typed `input`), or else one JSON
 * box. What is wrong is said on the form in one line, before sending or as the server refused it;
 * the new run's page opens once it is made.
 */
export function StartRun({ name, onClose }: { name: string; onClose: () => void }): JSX.Element {
  const [loaded, setLoaded] = useState<{ data?: ResponseOf<'GET /workflows/:name'>; error?: ApiError }>({});
  const [values, setValues] = useState<Values>({});
  const [json, setJson] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
    api
      .get<ResponseOf<'GET /workflows/:name'>>(`/workflows/${encodeURIComponent(name)}`)
      .then((data) => {
        setLoaded({ data });
        setValues(initial(data.form ?? []));
      })
      .catch((error: unknown) => setLoaded({ error: error instanceof ApiError ? error : new ApiError(0, 'client', String(error)) }));
  }, [name]);

  const start = async (form: HTMLFormElement) => {
    const { data } = loaded;
    if (!data) return;
    setFailure(null);
    const problem = invalidField(form);
    if (problem) return setFailure(problem);
    const parsed = data.form ? { value: inputOf(data.form, values) } : parseJson(json);
    if ('problem' in parsed) return setFailure(`The input is ${parsed.problem}`);
    setBusy(true);
    try {
      const { run } = await api.post<ResponseOf<'POST /runs'>>('/runs', { ...data.source, input: parsed.value });
      navigate(runPath(run.id));
    } catch (error) {
      setFailure(error instanceof ApiError ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card start-run" aria-labelledby="start-title">
      <h2 id="start-title" ref={heading} tabIndex={-1}>
        Start a run of {name}
      </h2>
      {loaded.error && <ErrorBox error={loaded.error} what={`the workflow ${name}`} />}
      {!loaded.data && !loaded.error && <Loading what="its inputs" />}
      {loaded.data && (
        <form
          class="gate-form"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void start(event.currentTarget);
          }}
        >
          {loaded.data.form ? (
            <fieldset>
              <legend>Its inputs</legend>
              {loaded.data.form.map((field) => (
                <Field field={field} gateRun={`start-${name}`} value={values[field.name] ?? ''} onChange={(value) => setValues({ ...values, [field.name]: value })} />
              ))}
            </fieldset>
          ) : (
            <label>
              Input (JSON; it declares no typed inputs)
              <textarea name="input" rows={4} value={json} onInput={(event) => setJson(event.currentTarget.value)} placeholder='{"order": "A-17"}' />
            </label>
          )}
          <div class="buttons">
            <button type="submit" class="approve" disabled={busy}>
              Start run
            </button>
            <button type="button" onClick={onClose}>
              Close
            </button>
            <span class="muted">It runs the workflow as its last run did, from the same place.</span>
          </div>
          {failure && (
            <p role="alert" class="form-error">
              {failure}
            </p>
          )}
        </form>
      )}
    </section>
  );
}
