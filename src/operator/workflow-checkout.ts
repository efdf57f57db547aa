import type { CoreV1Api } from '@kubernetes/client-node';
import { END, fileHeader, padding } from '../common/bundle/ustar.js';
import { maxCheckoutBytes } from '../engine/limits.js';
import { storeCheckout } from '../server/checkout-store.js';
import type { Store } from '../store/store.js';
import type { Workflow } from './api/generated.js';
import { httpStatus } from './kube/request-options.js';

export interface CheckoutFile {
  path: string;
  bytes: Buffer;
}

/** A Workflow's checkoutFrom read: its files, or why the run must wait; null when it names none. */
export type WorkflowCheckout =
  { ok: true; configMap: string; files: CheckoutFile[] } | { ok: false; message: string } | null;

/**
 * The files of spec.checkoutFrom's ConfigMap, one per key (data as UTF-8, binaryData byte for byte),
 * read once per run when it is admitted: a GET, not the script reader's string cache, because
 * binaryData must stay bytes.
 */
export async function workflowCheckout(core: CoreV1Api, workflow: Workflow): Promise<WorkflowCheckout> {
  const ref = workflow.spec.checkoutFrom?.configMapRef;
  if (!ref) return null;
  const namespace = workflow.metadata.namespace ?? 'default';
  try {
    const configMap = await core.readNamespacedConfigMap({ namespace, name: ref.name });
    const files = [
      ...Object.entries(configMap.data ?? {}).map(([path, text]) => ({ path, bytes: Buffer.from(text, 'utf8') })),
      ...Object.entries(configMap.binaryData ?? {}).map(([path, base64]) => ({
        path,
        bytes: Buffer.from(base64, 'base64'),
      })),
    ].sort((a, b) => (a.path < b.path ? -1 : 1));
    return { ok: true, configMap: ref.name, files };
  } catch (error) {
    const status = httpStatus(error);
    if (status === 404)
      return { ok: false, message: `ConfigMap ${ref.name} (its checkoutFrom) not found in namespace ${namespace}` };
    if (status === 403)
      return {
        ok: false,
        message: `the operator may not read ConfigMap ${ref.name} in namespace ${namespace} (its ClusterRole needs get on configmaps)`,
      };
    throw error;
  }
}

/** Stores the files as the run's bundle (`spool/checkout.tar`), before the run exists, so its first pass finds it. */
export async function storeWorkflowCheckout(
  store: Store,
  runId: string,
  files: readonly CheckoutFile[],
): Promise<void> {
  function* archive(): Generator<Buffer> {
    for (const file of files) {
      yield fileHeader(file.path, file.bytes.length, false);
      yield file.bytes;
      yield padding(file.bytes.length);
    }
    yield END;
  }
  await storeCheckout(store, runId, `${runId}/checkout/`, archive(), maxCheckoutBytes());
}
