import type { BatchV1Api, V1Job } from '@kubernetes/client-node';
import { httpStatus } from './request-options.js';

/**
 * Creates the Job unless one of its name is there: a pass's or an attempt's Job is named for it,
 * so a 409 means another leader got here first, or this is a retry of the same create.
 */
export async function createJobIfAbsent(batch: BatchV1Api, job: V1Job): Promise<void> {
  try {
    await batch.createNamespacedJob({ namespace: job.metadata?.namespace ?? 'default', body: job });
  } catch (error) {
    if (httpStatus(error) !== 409) throw error;
  }
}

/** Deletes the Jobs the label selector names, and in the background their pods, in one request. */
export async function deleteJobs(batch: BatchV1Api, namespace: string, labelSelector: string): Promise<void> {
  await batch.deleteCollectionNamespacedJob({ namespace, labelSelector, propagationPolicy: 'Background' });
}

/** Deletes the Job and, in the background, its pods; one already gone is fine. */
export async function deleteJob(batch: BatchV1Api, namespace: string, name: string): Promise<void> {
  try {
    await batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' });
  } catch (error) {
    if (httpStatus(error) !== 404) throw error;
  }
}
