import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchV1Api, V1Job } from '@kubernetes/client-node';
import { deleteJob } from '../kube/jobs.js';
import { httpStatus } from '../kube/request-options.js';
import { LABELS, MANAGED_BY } from '../naming.js';
import type { JobOwner } from './job-builder.js';

/** How long a create waits for an earlier Run's Job of the same name to go. */
const EARLIER_JOB_WAIT_SECONDS = 60;

/**
 * Creates a pass's Job (`<Run name>-p<N>`). A Job of that name may be there already:
 * - this pass's own (another leader got here first, or this is a retried create): nothing to do;
 * - a pass Job of an earlier Run of the same name, deleted and made again, which the garbage
 *   collector has not removed yet: it is deleted now and the create waits for its name;
 * - anything else (someone's own Job): not ours to delete, so the pass cannot start, saying so.
 */
export async function createPassJob(batch: BatchV1Api, job: V1Job, owner: JobOwner): Promise<void> {
  const namespace = job.metadata?.namespace ?? 'default';
  const name = job.metadata?.name ?? '';
  const mine = job.metadata?.labels ?? {};
  for (let waited = 0; ; waited += 1) {
    try {
      await batch.createNamespacedJob({ namespace, body: job });
      return;
    } catch (error) {
      if (httpStatus(error) !== 409) throw error;
    }
    // Listed by name, not read: the operator's RBAC lists and watches Jobs, it does not get them.
    const [there] = (await batch.listNamespacedJob({ namespace, fieldSelector: `metadata.name=${name}` })).items;
    // Gone between the create and the read: create again.
    if (!there) continue;
    const labels = there.metadata?.labels ?? {};
    if (labels[LABELS.run] === mine[LABELS.run] && labels[LABELS.pass] === mine[LABELS.pass]) return;
    const run = there.metadata?.ownerReferences?.find((reference) => reference.kind === 'Run' && reference.controller);
    // Of a Run by this name that is not this one: names are unique, so that Run is gone.
    if (labels[LABELS.managedBy] !== MANAGED_BY || run?.name !== owner.name || run.uid === owner.uid)
      throw new Error(`Job ${namespace}/${name} is in the way: it is not one of this run's; delete or rename it`);
    if (waited >= EARLIER_JOB_WAIT_SECONDS) throw new Error(`Job ${namespace}/${name} of an earlier Run named ${owner.name} is still being deleted`);
    if (!there.metadata?.deletionTimestamp) await deleteJob(batch, namespace, name);
    await sleep(1000);
  }
}
