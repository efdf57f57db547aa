import type { V1Job, V1ResourceRequirements } from '@kubernetes/client-node';
import type { ActivityRecord } from '../../store/types.js';
import type { ActivityClass } from '../api/generated.js';
import { ACTIVITY_NAME_ANNOTATION, LABELS, MANAGED_BY, activityJobName, activityKey, runKey } from '../naming.js';
import { ownedByRun, RESTRICTED_CONTAINER, RESTRICTED_POD, RUNNER_ACTIVITY_REPORTER, TOKEN_DIR, TOKEN_VOLUME, type JobOwner } from '../kube/pod-security.js';
import type { PassJobSettings } from '../passes/job-builder.js';
import { projectOfRunId } from '../../common/ids.js';

const CLIENT_DIR = '/spool/bin';

/** Where an attempt's pod reports its command's result: the operator's API (docs/api.md, "Agents"). */
export function attemptReportUrl(
  serverUrl: string,
  activity: Pick<ActivityRecord, 'runId' | 'name' | 'attempt'>,
): string {
  return `${serverUrl.replace(/\/$/, '')}/v1/agent/runs/${encodeURIComponent(activity.runId)}/activities/${encodeURIComponent(activity.name)}/attempts/${activity.attempt}`;
}

/**
 * One attempt of an activity as a Job of its own, shaped by its ActivityClass: the command runs
 * under `spool-activity-attempt` (a static binary, copied in from the runner image by an init
 * container, so any image will do), which captures its stdout and reports it with the exit code
 * to the operator, with a token bound to this pod. The Job never retries its pod: a lost attempt
 * is tried again by the operator as a new attempt, a new Job.
 */
export function buildAttemptJob(
  activity: ActivityRecord,
  klass: ActivityClass,
  owner: JobOwner,
  settings: PassJobSettings,
  maxResultBytes: number,
): V1Job {
  const namespace = projectOfRunId(activity.runId);
  const labels = {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.run]: runKey(activity.runId),
    [LABELS.activity]: activityKey(activity.name),
    [LABELS.attempt]: String(activity.attempt),
  };
  const annotations = { [ACTIVITY_NAME_ANNOTATION]: activity.name };
  const { spec } = klass;
  const client = { name: 'client', mountPath: CLIENT_DIR };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: activityJobName(activity.runId, activity.name, activity.attempt),
      namespace,
      labels,
      annotations,
      ownerReferences: ownedByRun(owner),
    },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: settings.ttlSecondsAfterFinished,
      template: {
        metadata: { labels, annotations },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: spec.serviceAccountName ?? 'default',
          automountServiceAccountToken: false,
          securityContext: RESTRICTED_POD,
          enableServiceLinks: false,
          ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
          ...(spec.tolerations?.length ? { tolerations: spec.tolerations } : {}),
          initContainers: [
            {
              name: 'client',
              image: settings.runnerImage,
              imagePullPolicy: 'IfNotPresent',
              command: ['cp', RUNNER_ACTIVITY_REPORTER, `${CLIENT_DIR}/spool-activity-attempt`],
              volumeMounts: [client],
              securityContext: RESTRICTED_CONTAINER,
            },
          ],
          containers: [
            {
              name: 'activity',
              image: spec.image ?? settings.runnerImage,
              imagePullPolicy: 'IfNotPresent',
              command: [`${CLIENT_DIR}/spool-activity-attempt`, '--', ...activity.argv],
              env: [
                { name: 'SPOOL_ACTIVITY_REPORT', value: attemptReportUrl(settings.serverUrl, activity) },
                { name: 'SPOOL_TOKEN_FILE', value: `${TOKEN_DIR}/token` },
                { name: 'SPOOL_MAX_RESULT_BYTES', value: String(maxResultBytes) },
                // What the command sees, as under spool run and spool dev.
                { name: 'SPOOL_ACTIVITY_ID', value: activity.id },
                { name: 'SPOOL_ATTEMPT', value: String(activity.attempt) },
              ],
              ...(spec.resources ? { resources: spec.resources as V1ResourceRequirements } : {}),
              volumeMounts: [
                { ...client, readOnly: true },
                { name: 'token', mountPath: TOKEN_DIR, readOnly: true },
              ],
              securityContext: RESTRICTED_CONTAINER,
            },
          ],
          volumes: [
            { name: 'client', emptyDir: {} },
            TOKEN_VOLUME,
          ],
        },
      },
    },
  };
}
