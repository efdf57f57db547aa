import type { V1Job } from '@kubernetes/client-node';
import type { RunRecord } from '../../store/types.js';
import { LABELS, MANAGED_BY, passJobName, runKey, workflowOf } from '../naming.js';
import { podSettingsOf } from '../workflow-source.js';

export interface PassJobSettings {
  /** The image with bash, python3, node and the spool client (Workflow.spec.image overrides it). */
  runnerImage: string;
  /** Where agents reach the operator's API from inside the cluster. */
  serverUrl: string;
  /** How long a finished pass's Job (and its pod's log) is kept. */
  ttlSecondsAfterFinished: number;
  /**
   * How long a pass's pod may take to start its script (scheduling, image pull, the agent's start)
   * before the pass is given up as lost and dispatched again. Default 10 minutes.
   */
  startTimeoutSeconds?: number;
}

/** Where the pass's sockets and script live inside the pod: an emptyDir both containers mount. */
const SPOOL_DIR = '/spool';
const TOKEN_DIR = '/var/run/secrets/hyperspool';
export const TOKEN_AUDIENCE = 'hyperspool';

/** The Run resource a pass's Job belongs to (deleting the Run deletes its Jobs). */
export interface JobOwner {
  name: string;
  uid: string;
}

/**
 * One pass of a run as a Job: the script container runs `spool pass`, which asks the agent for the
 * script and runs it; the agent is a native sidecar (an init container that keeps running) serving
 * the spool socket on a shared emptyDir, and the script starts only once the socket is there.
 * The Job never retries its pod: a lost pass is dispatched again by the operator as a new pass.
 */
export function buildPassJob(run: RunRecord, owner: JobOwner, settings: PassJobSettings): V1Job {
  const pod = podSettingsOf(run);
  const labels = {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.run]: runKey(run.id),
    [LABELS.pass]: String(run.passes),
    [LABELS.workflow]: workflowOf(run).name,
  };
  const image = pod.image ?? settings.runnerImage;
  const socket = `${SPOOL_DIR}/agent.sock`;
  const shared = [{ name: 'spool', mountPath: SPOOL_DIR }];
  const hardened = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: passJobName(run.id, run.passes),
      namespace: run.project,
      labels,
      ownerReferences: [
        { apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: settings.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: pod.serviceAccountName ?? 'default',
          // The only credential in the pod is the agent's audience-bound token below.
          automountServiceAccountToken: false,
          // What the restricted Pod Security Standard asks: runner images run as a non-root user.
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          enableServiceLinks: false,
          initContainers: [
            {
              name: 'agent',
              image,
              imagePullPolicy: 'IfNotPresent',
              restartPolicy: 'Always',
              command: ['spool', 'agent', '--socket', socket, '--control', `${SPOOL_DIR}/control.sock`],
              env: [
                { name: 'SPOOL_SERVER', value: settings.serverUrl },
                { name: 'SPOOL_RUN_ID', value: run.id },
                { name: 'SPOOL_PASS', value: String(run.passes) },
                { name: 'SPOOL_TOKEN_FILE', value: `${TOKEN_DIR}/token` },
              ],
              volumeMounts: [...shared, { name: 'token', mountPath: TOKEN_DIR, readOnly: true }],
              securityContext: hardened,
            },
          ],
          containers: [
            {
              name: 'script',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['spool', 'pass', '--socket', socket, '--control', `${SPOOL_DIR}/control.sock`, '--workdir', `${SPOOL_DIR}/work`],
              workingDir: SPOOL_DIR,
              env: (pod.env ?? []).map(({ name, value }) => ({ name, value })),
              volumeMounts: shared,
              securityContext: hardened,
            },
          ],
          volumes: [
            { name: 'spool', emptyDir: {} },
            {
              name: 'token',
              projected: {
                sources: [{ serviceAccountToken: { audience: TOKEN_AUDIENCE, expirationSeconds: 3600, path: 'token' } }],
              },
            },
          ],
        },
      },
    },
  };
}
