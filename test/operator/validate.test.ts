import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { uncheckedRules, validateManifest } from '../../src/operator/api/validate.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const apiVersion = 'hyperspool.dev/v1alpha1';

const samples = {
  Workflow: {
    apiVersion,
    kind: 'Workflow',
    metadata: { name: 'greet', namespace: 'demo' },
    spec: {
      filename: 'greet.py',
      script: 'print("hello")\n',
      image: 'hyperspool/runner:dev',
      lenient: true,
      env: [{ name: 'GREETING', value: 'hello' }],
      serviceAccountName: 'hyperspool-runner',
    },
  },
  Run: {
    apiVersion,
    kind: 'Run',
    metadata: { generateName: 'greet-' },
    spec: { workflowRef: { name: 'greet' }, input: { who: ['world', 1, null] }, subject: 'cust-1', idempotencyKey: 'k-1' },
    status: { runId: 'k8s:demo:run-1', phase: 'Waiting', awaiting: 'signal approve', passes: 2, startedAt: '2025-01-02T03:04:05Z' },
  },
  Handler: { apiVersion, kind: 'Handler', metadata: { name: 'orders' }, spec: { event: 'order.placed', workflowRef: { name: 'on-order' } } },
  Schedule: {
    apiVersion,
    kind: 'Schedule',
    metadata: { name: 'poll' },
    spec: { cron: '*/15 * * * *', workflowRef: { name: 'poll' }, input: 'any JSON', overlap: 'Allow', suspend: false },
  },
};

type Sample = (typeof samples)[keyof typeof samples];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test breaks manifests on purpose
type Loose = { [key: string]: any };

/** A copy of a sample with `change` applied to the copy (typed loosely, to break it on purpose). */
function changed(sample: Sample, change: (copy: Loose & { spec: Loose; status: Loose }) => void): unknown {
  const copy = structuredClone(sample) as Loose & { spec: Loose; status: Loose };
  change(copy);
  return copy;
}

function messageOf(manifest: unknown): string {
  const result = validateManifest(manifest);
  if (result.ok) throw new Error(`expected a refusal, got ok for ${JSON.stringify(manifest)}`);
  expect(result.message).not.toContain('\n');
  return result.message;
}

describe('validateManifest', () => {
  test.each(Object.entries(samples))('accepts a %s', (kind, sample) => {
    const result = validateManifest(sample);
    expect(result).toMatchObject({ ok: true, kind });
  });

  test('a missing required field is named by its path', () => {
    expect(messageOf(changed(samples.Run, (run) => delete run.spec.workflowRef))).toBe('spec.workflowRef: required');
    expect(messageOf(changed(samples.Run, (run) => (run.spec.workflowRef = {})))).toBe('spec.workflowRef.name: required');
    expect(messageOf(changed(samples.Workflow, (wf) => delete wf.spec.filename))).toBe('spec.filename: required');
    expect(messageOf(changed(samples.Handler, (h) => delete h.spec.event))).toBe('spec.event: required');
    expect(messageOf({ apiVersion, kind: 'Run', metadata: { name: 'r' } })).toBe('spec: required');
    expect(messageOf({ apiVersion, kind: 'Run', spec: {} })).toBe('metadata.name: required');
  });

  test('a wrong type is named by its path', () => {
    expect(messageOf(changed(samples.Run, (run) => (run.spec.workflowRef = { name: 5 })))).toBe(
      'spec.workflowRef.name: must be a string, not a number (5)',
    );
    expect(messageOf(changed(samples.Workflow, (wf) => (wf.spec.lenient = 'yes')))).toBe(
      "spec.lenient: must be a boolean, not a string ('yes')",
    );
    expect(messageOf(changed(samples.Workflow, (wf) => (wf.spec.env = { GREETING: 'hi' })))).toBe(
      'spec.env: must be a list, not an object',
    );
    expect(messageOf(changed(samples.Workflow, (wf) => (wf.spec.env = [{ name: 'A', value: 1 }])))).toBe(
      'spec.env[0].value: must be a string, not a number (1)',
    );
  });

  test('patterns, enums and formats name the field', () => {
    expect(messageOf(changed(samples.Schedule, (s) => ((s.spec.every = '5 minutes'), delete s.spec.cron)))).toMatch(
      /^spec\.every: must match .*, not '5 minutes'$/,
    );
    expect(messageOf(changed(samples.Schedule, (s) => (s.spec.cron = '* * *')))).toMatch(/^spec\.cron: must match /);
    expect(messageOf(changed(samples.Schedule, (s) => (s.spec.overlap = 'skip')))).toBe(
      "spec.overlap: must be one of Skip, Allow, not 'skip'",
    );
    expect(messageOf(changed(samples.Workflow, (wf) => (wf.spec.filename = 'notes.txt')))).toMatch(
      /^spec\.filename: must match .*, not 'notes\.txt'$/,
    );
    expect(messageOf(changed(samples.Workflow, (wf) => (wf.spec.script = '')))).toBe('spec.script: must not be empty');
    expect(messageOf(changed(samples.Run, (run) => (run.status.startedAt = 'yesterday')))).toBe(
      "status.startedAt: must be an RFC 3339 date-time, not 'yesterday'",
    );
    expect(messageOf(changed(samples.Run, (run) => (run.status.phase = 'Done')))).toMatch(/^status\.phase: must be one of Pending, /);
  });

  test('every filename extension the interpreters know is accepted', () => {
    for (const filename of ['a.sh', 'a.bash', 'a.py', 'a.mjs', 'a.js', 'a.cjs', 'a.yaml', 'a.yml']) {
      expect(validateManifest(changed(samples.Workflow, (wf) => (wf.spec.filename = filename))).ok, filename).toBe(true);
    }
    for (const filename of ['dir/a.sh', 'a', '.sh']) {
      expect(validateManifest(changed(samples.Workflow, (wf) => (wf.spec.filename = filename))).ok, filename).toBe(false);
    }
  });

  test('a Schedule needs exactly one of every and cron (the CRD rule, by its message)', () => {
    expect(messageOf(changed(samples.Schedule, (s) => (s.spec.every = '5m')))).toBe(
      'spec: exactly one of every and cron must be set',
    );
    expect(messageOf(changed(samples.Schedule, (s) => delete s.spec.cron))).toBe('spec: exactly one of every and cron must be set');
    expect(validateManifest(changed(samples.Schedule, (s) => ((s.spec.every = '1h30m'), delete s.spec.cron))).ok).toBe(true);
  });

  test('a Workflow needs exactly one of script and scriptFrom (the CRD rule), and scriptFrom a ConfigMap name and key', () => {
    const ref = { configMapKeyRef: { name: 'scripts-5g7b2m9f', key: 'hello.py' } };
    expect(validateManifest(changed(samples.Workflow, (wf) => ((wf.spec.scriptFrom = ref), delete wf.spec.script))).ok).toBe(true);
    expect(messageOf(changed(samples.Workflow, (wf) => (wf.spec.scriptFrom = ref)))).toBe('spec: give a Workflow exactly one of script and scriptFrom');
    expect(messageOf(changed(samples.Workflow, (wf) => delete wf.spec.script))).toBe('spec: give a Workflow exactly one of script and scriptFrom');
    expect(messageOf(changed(samples.Workflow, (wf) => ((wf.spec.scriptFrom = { configMapKeyRef: { name: 'scripts' } }), delete wf.spec.script)))).toBe(
      'spec.scriptFrom.configMapKeyRef.key: required',
    );
    expect(messageOf(changed(samples.Workflow, (wf) => ((wf.spec.scriptFrom = { configMapKeyRef: { name: 'Scripts', key: 'a.sh' } }), delete wf.spec.script)))).toMatch(
      /^spec\.scriptFrom\.configMapKeyRef\.name: /,
    );
  });

  test('unknown kinds, versions and fields are refused', () => {
    expect(messageOf({ ...samples.Run, kind: 'Job' })).toBe("kind: unknown kind 'Job'; use one of ActivityClass, Handler, Run, Schedule, Workflow");
    expect(messageOf({ ...samples.Run, apiVersion: 'hyperspool.dev/v1' })).toBe(
      "apiVersion: must be hyperspool.dev/v1alpha1, not 'hyperspool.dev/v1'",
    );
    expect(messageOf(changed(samples.Run, (run) => ((run.spec.workflowref = { name: 'x' }), delete run.spec.workflowRef)))).toBe(
      'spec.workflowref: unknown field (did you mean workflowRef?)',
    );
    expect(messageOf(changed(samples.Handler, (h) => (h.spec.events = ['a'])))).toBe(
      'spec.events: unknown field; known fields: event, successfulRunsHistoryLimit, failedRunsHistoryLimit, workflowRef',
    );
    expect(messageOf('Run')).toBe("manifest: must be an object, not a string ('Run')");
  });

  test('metadata names follow Kubernetes rules; env names are unique', () => {
    expect(messageOf({ ...samples.Handler, metadata: { name: 'Orders' } })).toMatch(/^metadata\.name: 'Orders' must be lowercase/);
    expect(
      messageOf(changed(samples.Workflow, (wf) => (wf.spec.env = [{ name: 'A', value: '1' }, { name: 'A', value: '2' }]))),
    ).toBe("spec.env[1]: duplicate name 'A'");
  });

  test('a null field is dropped, as the API server prunes it, except inside an input', () => {
    const result = validateManifest(changed(samples.Run, (run) => ((run.spec.subject = null), (run.spec.input = null))));
    expect(result.ok).toBe(true);
    const rest: Record<string, unknown> = { ...samples.Run.spec };
    delete rest.subject;
    delete rest.input;
    if (result.ok) expect(result.value.spec).toEqual(rest);
    const nested = validateManifest(changed(samples.Run, (run) => (run.spec.input = { a: null, b: [null] })));
    if (nested.ok) expect(nested.value.spec).toMatchObject({ input: { a: null, b: [null] } });
    expect(nested.ok).toBe(true);
  });

  test('every CEL rule in crds/ has a check (or is an update-only rule)', () => {
    expect(uncheckedRules()).toEqual([]);
  });
});

describe('config/samples', () => {
  const dir = join(repo, 'config', 'samples');
  const files = readdirSync(dir).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');

  test('holds a Workflow and what uses it for each recipe', () => {
    expect(files.sort()).toEqual(['orders.yaml', 'refund.yaml', 'release.yaml', 'saga.yaml', 'ticket-poll.yaml']);
  });

  test.each(files)('%s passes validateManifest', (file) => {
    const docs = parseAllDocuments(readFileSync(join(dir, file), 'utf8'));
    const kinds: string[] = [];
    for (const doc of docs) {
      expect(doc.errors).toEqual([]);
      const result = validateManifest(doc.toJS());
      expect(result.ok ? 'ok' : result.message, file).toBe('ok');
      if (result.ok) kinds.push(result.kind);
    }
    expect(kinds[0], `${file} starts with its Workflow`).toBe('Workflow');
    expect(kinds.length).toBeGreaterThan(1);
  });

  test('the saga sample is examples/saga.sh', () => {
    const [workflow] = parseAllDocuments(readFileSync(join(dir, 'saga.yaml'), 'utf8')).map((doc) => doc.toJS() as { spec: { script: string } });
    expect(workflow?.spec.script).toBe(readFileSync(join(repo, 'examples', 'saga.sh'), 'utf8'));
  });
});
