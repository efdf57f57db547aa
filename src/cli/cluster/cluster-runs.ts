import { existsSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SpoolError, UsageError } from '../../common/errors.js';
import { API_VERSION, GROUP, RUN, VERSION, WORKFLOW, type JsonValue, type Run, type RunList, type Workflow } from '../../operator/api/generated.js';
import { validateManifest } from '../../operator/api/validate.js';
import { httpStatus } from '../../operator/kube/request-options.js';
import { kubeError, type ClusterTarget } from './kube-target.js';
import { LABELS, RUN_KEY, runKey, workflowOf } from '../../operator/naming.js';
import type { ResponseOf, Run as StoreRun } from '../../api/responses.js';

/** A run as the control verbs print it, from its Run resource. */
export interface RunRow {
  id: string;
  name: string;
  status: string;
  awaiting: string | null;
  passes: number;
  createdAt: string;
  workflow: string;
  error: string | null;
}

export interface ClusterSubmit {
  input: unknown;
  idempotencyKey?: string;
  lenient: boolean;
  /** The Workflow's name, when FILE is a script (default: the file's name without extension). */
  workflow?: string;
}

/** How long submit waits for the operator to admit the Run and name its run id. */
const ADMISSION_TIMEOUT_MS = 60_000;

/**
 * `spool submit FILE` on a cluster: FILE's script becomes (or updates) a Workflow of its name, and a
 * new Run of it is created. A FILE that is not a local file names a Workflow already there.
 */
export async function submitToCluster(target: ClusterTarget, file: string, options: ClusterSubmit): Promise<RunRow> {
  const { readWorkflowFile } = await import('../../workflow-file/check.js');
  let workflow: string;
  if (existsSync(file)) {
    workflow = options.workflow ?? workflowNameOf(file);
    const { script } = readWorkflowFile(file);
    const filename = basename(file);
    await applyWorkflow(target, workflow, filename, script);
  } else {
    if (file.includes('/') || extname(file)) throw new UsageError(`no such file: ${file}`);
    workflow = file;
    await target.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: target.namespace, plural: WORKFLOW.plural, name: workflow }).catch((error: unknown) => {
      throw kubeError(error, `Workflow ${workflow} in namespace ${target.namespace} (FILE is neither a local file nor a Workflow)`);
    });
  }
  const manifest = checked({
    apiVersion: API_VERSION,
    kind: RUN.kind,
    metadata: { generateName: `${workflow}-`, namespace: target.namespace },
    spec: {
      workflowRef: { name: workflow },
      ...(options.input !== null && options.input !== undefined ? { input: options.input as JsonValue } : {}),
      ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.lenient ? { lenient: true } : {}),
    },
  });
  const created = (await target.custom
    .createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: target.namespace, plural: RUN.plural, body: manifest })
    .catch((error: unknown) => {
      throw kubeError(error, `creating a Run of ${workflow} in namespace ${target.namespace}`);
    })) as Run;
  return waitForAdmission(target, created.metadata.name ?? '');
}

export interface ClusterRerun {
  fromStep?: string;
  /** Absent: the old run's input. */
  input?: unknown;
  latest?: boolean;
}

/**
 * `spool rerun RUN` on a cluster: a new Run of the old Run's Workflow whose spec.rerunOf names it
 * (the operator copies the journal prefix as it admits it), labelled with its name. A step the old
 * run never reached is refused here first, from its journal read as the user, so nothing is made.
 */
export async function rerunOnCluster(target: ClusterTarget, name: string, options: ClusterRerun): Promise<RunRow> {
  const old = await target.getRun(name);
  const runId = old.status?.runId;
  if (!runId) throw new UsageError(`Run ${name} in namespace ${target.namespace} has not been admitted yet, so there is nothing to rerun`);
  if (options.fromStep !== undefined) {
    const { rerunStart } = await import('../../engine/rerun.js');
    const path = `/runs/${encodeURIComponent(runId)}`;
    const { run } = await target.api<ResponseOf<'GET /runs/:id'>>('GET', path);
    const { journal } = await target.api<ResponseOf<'GET /runs/:id/journal'>>('GET', `${path}/journal`);
    rerunStart(run, journal, options.fromStep);
  }
  const workflow = old.spec.workflowRef.name;
  const manifest = checked({
    apiVersion: API_VERSION,
    kind: RUN.kind,
    metadata: { generateName: `${workflow}-`, namespace: target.namespace, ...(name.length <= 63 ? { labels: { [LABELS.rerunOf]: name } } : {}) },
    spec: {
      workflowRef: { name: workflow },
      rerunOf: { name, ...(options.fromStep !== undefined ? { fromStep: options.fromStep } : {}), ...(options.latest ? { latest: true } : {}) },
      ...(options.input !== undefined ? { input: options.input as JsonValue } : {}),
    },
  });
  const created = (await target.custom
    .createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: target.namespace, plural: RUN.plural, body: manifest })
    .catch((error: unknown) => {
      throw kubeError(error, `creating a rerun of ${name} in namespace ${target.namespace}`);
    })) as Run;
  return waitForAdmission(target, created.metadata.name ?? '');
}

/** How many runs `spool runs` shows, newest first: the API's default page, as locally. */
const RUNS_PAGE = 100;

export interface ClusterRunsQuery {
  /** `spool runs --search/--since/--until/--sort`, as the API's query. */
  search?: string;
  /** Also the runs whose Run resource is gone (`--all`): the store keeps them. */
  all?: boolean;
  statuses?: string[];
}

/**
 * The runs `spool runs` lists on a cluster: a page of the namespace's runs from the store (through
 * the aggregated API, an index scan whatever their number), each shown by its Run, fetched in one
 * list by their run labels, plus the Runs not admitted yet (no run label: a Workflow still to
 * come, or refused). Never a list of every Run in the namespace, which at 100,000 Runs is hundreds
 * of megabytes from the API server (docs/scaling.md). A run whose Run is gone is shown only with
 * `all`.
 */
export async function listClusterRuns(target: ClusterTarget, query: ClusterRunsQuery = {}): Promise<RunRow[]> {
  const { search = '', all = false, statuses } = query;
  const status = statuses ? `&status=${encodeURIComponent(statuses.join(','))}` : '';
  const { runs } = await target.api<ResponseOf<'GET /runs'>>('GET', `/runs?limit=${RUNS_PAGE}${search ? `&${search}` : ''}${status}`);
  const keys = runs.map((run) => runKey(run.id));
  const resources = new Map((keys.length > 0 ? await listRuns(target, `${LABELS.run} in (${keys.join(',')})`) : []).map((run) => [run.status?.runId ?? '', rowOf(run)]));
  const page = runs.flatMap((run) => {
    const row = resources.get(run.id);
    return row ? [row] : all ? [archivedRow(run)] : [];
  });
  // What the store does not hold yet has no place in its order (nor in a search): newest first, before the page.
  if (search) return page;
  const waiting = (await listRuns(target, `!${LABELS.run}`)).map(rowOf).filter((row) => !statuses || statuses.includes(row.status));
  return [...waiting.sort((a, b) => b.createdAt.localeCompare(a.createdAt)), ...page];
}

/** The namespace's Runs that a label selector picks. */
async function listRuns(target: ClusterTarget, labelSelector: string): Promise<Run[]> {
  const list = (await target.custom
    .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: target.namespace, plural: RUN.plural, labelSelector })
    .catch((error: unknown) => {
      if (httpStatus(error) === 404) throw new SpoolError('not_found', 'this cluster has no Run resource type: install the CRDs (kubectl apply -k config/default)');
      throw kubeError(error, `listing Runs in namespace ${target.namespace}`);
    })) as RunList;
  return list.items;
}

/** An archived run goes by its key (the aggregated API finds it by that) and its Workflow's name. */
function archivedRow(run: StoreRun): RunRow {
  return {
    id: run.id,
    name: runKey(run.id),
    status: run.status,
    awaiting: run.awaiting,
    passes: run.passes,
    createdAt: run.createdAt,
    workflow: workflowOf(run).name,
    error: run.error,
  };
}

export async function clusterRunStatus(target: ClusterTarget, arg: string): Promise<Record<string, unknown>> {
  const run = await (arg.includes(':') ? findByRunId(target, arg) : target.getRun(arg)).catch(async (error: unknown) => {
    // No Run: an archived run (the store keeps it after its Run is deleted) answers from the store.
    if (!(error instanceof SpoolError && error.kind === 'not_found') || !(arg.includes(':') || RUN_KEY.test(arg))) throw error;
    const stored = await target.api<ResponseOf<'GET /runs/:id'>>('GET', `/runs/${encodeURIComponent(await target.runId(arg))}`).catch(() => Promise.reject(error));
    return stored.run;
  });
  if (!('metadata' in run)) return { ...archivedRow(run), namespace: target.namespace, archived: 'its Run resource was deleted; the store keeps the run' };
  const row = rowOf(run);
  return {
    ...row,
    namespace: run.metadata.namespace,
    // Links both ways, as Run names: the Run this one reruns, and the Runs labelled as its reruns.
    ...(run.spec.rerunOf ? { rerunOf: { name: run.spec.rerunOf.name, fromStep: run.spec.rerunOf.fromStep ?? null, ...(run.spec.rerunOf.latest ? { latest: true } : {}) } } : {}),
    ...(await rerunsOf(target, row.name)),
    conditions: run.status?.conditions?.map((c) => `${c.type}=${c.status} (${c.reason})`).join(', '),
  };
}

async function rerunsOf(target: ClusterTarget, name: string): Promise<{ reruns?: string[] }> {
  if (name.length > 63) return {};
  const list = (await target.custom
    .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: target.namespace, plural: RUN.plural, labelSelector: `${LABELS.rerunOf}=${name}` })
    .catch((error: unknown) => {
      throw kubeError(error, `listing the reruns of ${name} in namespace ${target.namespace}`);
    })) as RunList;
  const names = list.items.map((item) => item.metadata.name ?? '').sort();
  return names.length > 0 ? { reruns: names } : {};
}

async function findByRunId(target: ClusterTarget, runId: string): Promise<Run> {
  const found = (await listClusterRuns(target)).find((row) => row.id === runId);
  if (!found) throw new SpoolError('not_found', `no Run in namespace ${target.namespace} has run id ${runId}`);
  return target.getRun(found.name);
}

function rowOf(run: Run): RunRow {
  return {
    id: run.status?.runId ?? '',
    name: run.metadata.name ?? '',
    status: (run.status?.phase ?? 'Pending').toLowerCase(),
    awaiting: run.status?.awaiting ?? null,
    passes: run.status?.passes ?? 0,
    createdAt: run.metadata.creationTimestamp ? new Date(run.metadata.creationTimestamp).toISOString() : '',
    workflow: run.spec.workflowRef.name,
    error: run.status?.phase === 'Failed' ? (run.status.message ?? null) : null,
  };
}

async function waitForAdmission(target: ClusterTarget, name: string): Promise<RunRow> {
  const deadline = Date.now() + ADMISSION_TIMEOUT_MS;
  for (;;) {
    const run = await target.getRun(name);
    if (run.status?.runId) return rowOf(run);
    if (Date.now() > deadline) {
      throw new SpoolError('unavailable', `Run ${name} was created, but no operator admitted it within ${ADMISSION_TIMEOUT_MS / 1000}s; is the operator running?`);
    }
    await delay(200);
  }
}

/** How long `spool event emit` waits for the operator to make the Runs of the runs it started. */
const RUN_NAMES_TIMEOUT_MS = 10_000;

/**
 * The names `kubectl get runs` shows for runs the operator started in the store (a Handler's, from
 * `spool event emit`): each as soon as the operator has made its Run, which it does as it sees the
 * run; its run key (which names it to every verb too) if none appears within RUN_NAMES_TIMEOUT_MS.
 */
export async function runNamesOf(target: ClusterTarget, runIds: readonly string[]): Promise<string[]> {
  const deadline = Date.now() + RUN_NAMES_TIMEOUT_MS;
  return Promise.all(
    runIds.map(async (runId) => {
      for (;;) {
        const name = await target.findRunName(runId);
        if (name) return name;
        if (Date.now() > deadline) return runKey(runId);
        await delay(200);
      }
    }),
  );
}

/** `deploy-prod.sh` → `deploy-prod`: a DNS-1123 name, as a Workflow's must be. */
function workflowNameOf(file: string): string {
  const name = basename(file, extname(file))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (!name) throw new UsageError(`cannot make a Workflow name from ${file}; pass --workflow NAME`);
  return name.slice(0, 63);
}

/** Creates the Workflow, or points an existing one at this script (its other settings stay). */
async function applyWorkflow(target: ClusterTarget, name: string, filename: string, script: string): Promise<void> {
  const { custom, namespace } = target;
  const manifest = checked({ apiVersion: API_VERSION, kind: WORKFLOW.kind, metadata: { name, namespace }, spec: { filename, script } }) as Workflow;
  const what = `Workflow ${name} in namespace ${namespace}`;
  let existing: Workflow;
  try {
    existing = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: WORKFLOW.plural, name })) as Workflow;
  } catch (error) {
    if (httpStatus(error) !== 404) throw kubeError(error, what);
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: WORKFLOW.plural, body: manifest }).catch((failed: unknown) => {
      throw kubeError(failed, `creating ${what}`);
    });
    return;
  }
  if (existing.spec.filename === filename && existing.spec.script === script) return;
  // Its script lives in a ConfigMap (kept in git, most likely): writing one here would fight that.
  const from = existing.spec.scriptFrom?.configMapKeyRef;
  if (from) throw new UsageError(`${what} takes its script from ConfigMap ${from.name} key ${from.key} (scriptFrom): change it there, or pass --workflow NAME for another Workflow`);
  await custom
    .patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural: WORKFLOW.plural, name, body: { spec: { filename, script } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )
    .catch((failed: unknown) => {
      throw kubeError(failed, what);
    });
}

/** The CLI refuses what the API server would, with the field's name, before sending it. */
function checked<T>(manifest: T): T {
  const result = validateManifest(manifest);
  if (!result.ok) throw new UsageError(result.message);
  return manifest;
}
