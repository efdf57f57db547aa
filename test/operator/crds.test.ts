import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateManifest } from '../../src/operator/api/validate.js';
import { startControlPlane, type ControlPlane } from '../support/kube.js';
import { getTable } from '../support/kube-table.js';

/**
 * crds/ on a real kube-apiserver: the CRDs install (structural schemas, CEL rules that compile),
 * the samples apply, and the API server refuses what validateManifest refuses, naming the same field.
 */
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const samplesDir = join(repo, 'config', 'samples');
const sampleFiles = readdirSync(samplesDir).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
const apiVersion = 'hyperspool.dev/v1alpha1';
const namespace = 'spool-samples';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe('crds/ on kube-apiserver', () => {
  let plane: ControlPlane;

  const kubectl = (args: string[], input?: string): Promise<Result> =>
    new Promise((resolve) => {
      const child = execFile(
        plane.kubectl,
        ['--kubeconfig', plane.kubeconfigPath, ...args],
        { cwd: repo, encoding: 'utf8', timeout: 60_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin?.end(input ?? '');
    });

  const ok = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl(args, input);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${result.stderr}${result.stdout}`);
    return result.stdout;
  };

  /** Creates `manifest` and expects the API server to refuse it; the error text. */
  const refused = async (manifest: object): Promise<string> => {
    const result = await kubectl(['create', '-n', namespace, '-f', '-'], JSON.stringify(manifest));
    expect(result.code, `the API server accepted ${JSON.stringify(manifest)}`).not.toBe(0);
    return result.stderr;
  };

  // Long: when the pinned binaries are not built yet, startControlPlane builds them first.
  beforeAll(async () => {
    plane = await startControlPlane();
    await ok(['apply', '-f', 'crds/']);
    await ok([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      ...['workflows', 'runs', 'handlers', 'schedules', 'activityclasses'].map((plural) => `crd/${plural}.hyperspool.dev`),
    ]);
    await ok(['create', 'namespace', namespace]);
  }, 45 * 60_000);

  afterAll(async () => {
    await plane?.stop();
  });

  it('installs the four kinds, namespaced, with short names and the category spool', async () => {
    const resources = await ok(['api-resources', '--api-group=hyperspool.dev', '--no-headers', '-o', 'wide']);
    for (const [plural, short] of [
      ['workflows', 'swf'],
      ['runs', 'srun'],
      ['handlers', 'shd'],
      ['schedules', 'ssch'],
    ]) {
      expect(resources).toMatch(new RegExp(`^${plural}\\s+${short}\\s+hyperspool.dev/v1alpha1\\s+true\\s+\\w+\\s.*spool`, 'm'));
    }
  });

  it('applies every sample', async () => {
    for (const file of sampleFiles) {
      await ok(['apply', '-n', namespace, '-f', join('config', 'samples', file)]);
    }
    const names = await ok(['get', 'spool', '-n', namespace, '-o', 'name']);
    expect(names.split('\n').filter(Boolean).sort()).toEqual([
      'handler.hyperspool.dev/orders',
      'run.hyperspool.dev/refund-1042',
      'run.hyperspool.dev/release-1',
      'run.hyperspool.dev/saga-1',
      'schedule.hyperspool.dev/ticket-poll',
      'workflow.hyperspool.dev/on-order',
      'workflow.hyperspool.dev/refund',
      'workflow.hyperspool.dev/release',
      'workflow.hyperspool.dev/saga',
      'workflow.hyperspool.dev/ticket-poll',
    ]);
  });

  it('refuses a Run with a wrong type or no workflowRef, naming the field, as validateManifest does', async () => {
    const cases: [object, string][] = [
      [{ workflowRef: { name: 5 } }, 'spec.workflowRef.name'],
      [{ input: { anything: [1, 'two'] } }, 'spec.workflowRef'],
      [{ workflowRef: { name: 'saga' }, lenient: 'yes' }, 'spec.lenient'],
    ];
    for (const [index, [spec, field]] of cases.entries()) {
      const run = { apiVersion, kind: 'Run', metadata: { name: `bad-${index}` }, spec };
      const client = validateManifest(run);
      expect(client.ok ? 'ok' : client.message).toMatch(new RegExp(`^${field.replaceAll('.', '\\.')}: `));
      expect(await refused(run)).toContain(field);
    }
    // Any JSON is a fine input.
    const input = { apiVersion, kind: 'Run', metadata: { name: 'any-input' }, spec: { workflowRef: { name: 'saga' }, input: [1, { a: 'b' }] } };
    expect(validateManifest(input).ok).toBe(true);
    await ok(['create', '-n', namespace, '-f', '-'], JSON.stringify(input));
  });

  it('takes config/activities, cluster-scoped; refuses an ActivityClass without capabilities, or with a bad capability or quantity, naming the field', async () => {
    await ok(['apply', '-k', 'config/activities']);
    expect(await ok(['get', 'activityclasses', '-o', 'jsonpath={.items[*].metadata.name}={.items[*].spec.capabilities}'])).toBe('shell=["shell","polyglot"]');
    const klass = (name: string, spec: object) => ({ apiVersion, kind: 'ActivityClass', metadata: { name }, spec });
    const cases: [string, object, string][] = [
      ['none', {}, 'spec.capabilities'],
      ['empty', { capabilities: [] }, 'spec.capabilities'],
      ['spaced', { capabilities: ['big gpu'] }, 'spec.capabilities[0]'],
      ['twice', { capabilities: ['gpu', 'gpu'] }, 'spec.capabilities[1]'],
      ['memory-words', { capabilities: ['gpu'], resources: { limits: { memory: 'lots' } } }, 'spec.resources.limits.memory'],
      ['bad-effect', { capabilities: ['gpu'], tolerations: [{ key: 'gpu', effect: 'Sometimes' }] }, 'spec.tolerations[0].effect'],
    ];
    for (const [name, spec, field] of cases) {
      const manifest = klass(name, spec);
      expect(validateManifest(manifest).ok, name).toBe(false);
      const result = await kubectl(['create', '-f', '-'], JSON.stringify(manifest));
      expect(result.code, name).not.toBe(0);
      expect(result.stderr, name).toContain(field);
    }
    const gpu = klass('gpu', { capabilities: ['gpu'], image: 'registry.example/cuda:12', nodeSelector: { pool: 'gpu' }, resources: { limits: { 'nvidia.com/gpu': 1 } } });
    expect(validateManifest(gpu).ok).toBe(true);
    await ok(['create', '-f', '-'], JSON.stringify(gpu));
  });

  it('refuses a Schedule with both every and cron, or neither', async () => {
    const schedule = (spec: object, name: string) => ({ apiVersion, kind: 'Schedule', metadata: { name }, spec });
    for (const [name, spec] of [
      ['both', { every: '5m', cron: '*/5 * * * *', workflowRef: { name: 'ticket-poll' } }],
      ['neither', { workflowRef: { name: 'ticket-poll' } }],
    ] as const) {
      const manifest = schedule(spec, name);
      expect(validateManifest(manifest)).toEqual({ ok: false, message: 'spec: exactly one of every and cron must be set' });
      expect(await refused(manifest)).toContain('exactly one of every and cron must be set');
    }
    const bad = schedule({ every: '5 minutes', workflowRef: { name: 'ticket-poll' } }, 'bad-every');
    expect(validateManifest(bad).ok).toBe(false);
    expect(await refused(bad)).toContain('spec.every');
  });

  it("refuses a Workflow's bad pod settings (env, envFrom, template), naming the field", async () => {
    const workflow = (name: string, spec: object) => ({ apiVersion, kind: 'Workflow', metadata: { name }, spec: { filename: 'x.sh', script: 'true', ...spec } });
    const cases: [string, object, string][] = [
      ['memory-words', { template: { resources: { limits: { memory: 'lots' } } } }, 'spec.template.resources.limits.memory'],
      ['deadline-zero', { template: { activeDeadlineSeconds: 0 } }, 'spec.template.activeDeadlineSeconds'],
      ['toleration-op', { template: { tolerations: [{ key: 'gpu', operator: 'Maybe' }] } }, 'spec.template.tolerations[0].operator'],
      ['two-sources', { template: { volumes: [{ name: 'data', emptyDir: {}, secret: { secretName: 's' } }] } }, 'a volume takes exactly one source'],
      ['own-volume', { template: { volumes: [{ name: 'spool', emptyDir: {} }] } }, 'the volume names spool, client and token belong to the pass'],
      ['mount-spool', { template: { volumeMounts: [{ name: 'data', mountPath: '/spool/data' }] } }, '/spool belongs to the pass'],
      ['env-both', { env: [{ name: 'KEY', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }, 'either a value or a valueFrom'],
      ['env-secret-key', { env: [{ name: 'KEY', valueFrom: { secretKeyRef: { name: 's' } } }] }, 'spec.env[0].valueFrom.secretKeyRef.key'],
      ['env-from-none', { envFrom: [{ prefix: 'X_' }] }, 'envFrom takes exactly one of secretRef, configMapRef'],
      ['unknown-field', { template: { resource: { limits: { memory: '1Gi' } } } }, 'spec.template.resource'],
    ];
    for (const [name, spec, field] of cases) expect(await refused(workflow(`bad-${name}`, spec)), name).toContain(field);
    const good = workflow('good-template', {
      env: [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'api', key: 'key' } } }],
      envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'APP_' }],
      template: {
        resources: { limits: { memory: '256Mi', cpu: 1 }, requests: { cpu: '100m' } },
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }],
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        tolerations: [{ key: 'batch', operator: 'Exists', effect: 'NoSchedule' }],
        affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
        imagePullSecrets: [{ name: 'registry' }],
        priorityClassName: 'batch',
        activeDeadlineSeconds: 3600,
      },
    });
    await ok(['create', '-n', namespace, '-f', '-'], JSON.stringify(good));
  });

  it("refuses a change to a Run's spec, and takes status through the status subresource", async () => {
    const patched = await kubectl(['patch', 'run', 'saga-1', '-n', namespace, '--type=merge', '-p', '{"spec":{"subject":"x"}}']);
    expect(patched.code).not.toBe(0);
    expect(patched.stderr).toContain('spec is immutable: create a new Run');

    // Labels are not spec: they may change.
    await ok(['label', 'run', 'saga-1', '-n', namespace, 'team=payments']);

    // A status in an ordinary update is ignored; through the subresource it is written.
    const status = { status: { runId: 'k8s:spool-samples:saga-1', phase: 'Waiting', substate: 'awaiting_signal', awaiting: 'signal approve', passes: 2 } };
    await ok(['patch', 'run', 'saga-1', '-n', namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
    const badStatus = await kubectl([
      'patch', 'run', 'saga-1', '-n', namespace, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Done"}}',
    ]);
    expect(badStatus.code).not.toBe(0);
    expect(badStatus.stderr).toContain('status.phase');
  });

  it('kubectl get runs shows WORKFLOW PHASE SUBSTATE AWAITING PASSES DURATION MESSAGE AGE, and -o wide the subject, run id and times; workflows READY, schedules the next tick and last run', async () => {
    const table = await ok(['get', 'runs', '-n', namespace]);
    const [header, ...rows] = table.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'WORKFLOW', 'PHASE', 'SUBSTATE', 'AWAITING', 'PASSES', 'DURATION', 'MESSAGE', 'AGE']);
    const saga = rows.find((row) => row.startsWith('saga-1 '));
    expect(saga).toMatch(/^saga-1\s+saga\s+Waiting\s+awaiting_signal\s+signal approve\s+2\s+\S+$/);
    const wide = (await ok(['get', 'runs', '-n', namespace, '-o', 'wide'])).split('\n')[0]?.split(/\s{2,}/);
    expect(wide?.slice(-4)).toEqual(['SUBJECT', 'RUN ID', 'STARTED', 'FINISHED']);
    const schedules = await ok(['get', 'ssch', '-n', namespace]);
    expect(schedules.split('\n')[0]?.split(/\s{2,}/)).toEqual(['NAME', 'WORKFLOW', 'EVERY', 'CRON', 'LAST', 'LAST RUN', 'NEXT', 'READY', 'AGE']);
    const workflows = await ok(['get', 'swf', '-n', namespace]);
    expect(workflows.split('\n')[0]?.split(/\s{2,}/)).toEqual(['NAME', 'FILENAME', 'READY', 'AGE']);
  });

  it("answers kubectl's Table request with each column's cell: an ended run's DURATION, its SUBJECT in wide, a Workflow's READY, a Schedule's NEXT and LAST RUN", async () => {
    const status = {
      status: {
        runId: 'k8s:spool-samples:refund-1042', phase: 'Failed', passes: 3, message: "script exited 1 (step 'charge' exited 1)",
        startedAt: '2026-01-01T10:00:00Z', finishedAt: '2026-01-01T10:01:12Z', duration: '1m12s',
      },
    };
    await ok(['patch', 'run', 'refund-1042', '-n', namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
    const runs = await getTable(plane.kubeConfig(), `/apis/${apiVersion}/namespaces/${namespace}/runs`);
    expect(runs.columns.map(({ name, priority }) => `${name}${priority ? ' (wide)' : ''}`)).toEqual([
      'Name', 'Workflow', 'Phase', 'Substate', 'Awaiting', 'Passes', 'Duration', 'Message', 'Age', 'Subject (wide)', 'Run ID (wide)', 'Started (wide)', 'Finished (wide)',
    ]);
    expect(runs.rows.find((row) => row.name === 'refund-1042')?.cells).toMatchObject({
      Workflow: 'refund', Phase: 'Failed', Passes: 3, Duration: '1m12s', Message: "script exited 1 (step 'charge' exited 1)", Subject: 'order-1042',
    });

    await ok(['patch', 'workflow', 'refund', '-n', namespace, '--subresource=status', '--type=merge', '-p',
      JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Parsed', message: '', lastTransitionTime: '2026-01-01T10:00:00Z' }] } })]);
    const workflows = await getTable(plane.kubeConfig(), `/apis/${apiVersion}/namespaces/${namespace}/workflows`);
    expect(workflows.rows.find((row) => row.name === 'refund')?.cells).toMatchObject({ Ready: 'True' });

    await ok(['patch', 'schedule', 'ticket-poll', '-n', namespace, '--subresource=status', '--type=merge', '-p',
      JSON.stringify({ status: { lastRunName: 'ticket-poll-29400000', lastScheduleTime: '2026-01-01T10:00:00Z', nextScheduleTime: '2099-01-01T10:05:00Z' } })]);
    const schedules = await getTable(plane.kubeConfig(), `/apis/${apiVersion}/namespaces/${namespace}/schedules`);
    const poll = schedules.rows.find((row) => row.name === 'ticket-poll')?.cells;
    expect(poll).toMatchObject({ Workflow: 'ticket-poll', 'Last Run': 'ticket-poll-29400000' });
    // The API server prints a date column as an age, and a time to come as '<invalid>': the next
    // tick is a time.
    expect(poll?.Next).toBe('2099-01-01T10:05:00Z');
    expect(poll?.Last).toMatch(/^\d+d$/);
  });

  it('kubectl explain shows the descriptions', async () => {
    // The API server publishes a new CRD's OpenAPI a moment after it is established.
    let explained: Result = { code: 1, stdout: '', stderr: '' };
    for (let attempt = 0; attempt < 30; attempt++) {
      explained = await kubectl(['explain', 'runs.spec.workflowRef.name']);
      if (explained.code === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(explained.stderr).toBe('');
    expect(explained.stdout).toContain('The name of a Workflow in the same namespace.');

    // `kubectl explain run.status` (and every object field's) reads as documentation: each field
    // it lists is followed by its description.
    for (const path of ['run.status', 'run.spec', 'run.status.conditions', 'workflow.spec', 'workflow.spec.template', 'schedule.spec', 'schedule.status', 'handler.spec']) {
      const text = await ok(['explain', path]);
      const fields = text.slice(text.indexOf('FIELDS:')).split('\n').slice(1);
      const listed = fields.flatMap((line, index) => {
        const field = /^ {2}(\S+)\t<.+>/.exec(line)?.[1];
        // An enum's values come on a line of their own before the description.
        const after = fields.slice(index + 1).find((next) => !next.startsWith('  enum: ')) ?? '';
        return field ? [{ field, next: after }] : [];
      });
      expect(listed.length, path).toBeGreaterThan(0);
      const bare = listed.filter(({ next }) => !/^ {4}\S/.test(next) || next.trim() === '<no description>').map(({ field }) => `${path}.${field}`);
      expect(bare, `${path}: fields without a description`).toEqual([]);
    }
  });
});
