import type { V1EnvVar, V1Job, V1JobSpec, V1PodSpec, V1ResourceRequirements, V1Volume } from '@kubernetes/client-node';
import { API_VERSION, WORKFLOW, type Template } from '../api/generated.js';
import type { RunRecord } from '../../store/types.js';
import { LABELS, MANAGED_BY, passJobName, runKey, WARM, workflowOf } from '../naming.js';
import { podSettingsOf, type PodSettings } from '../workflow-source.js';
import { ownedByRun, RESTRICTED_CONTAINER, RESTRICTED_POD, RUNNER_CLIENT, TOKEN_DIR, TOKEN_VOLUME, type JobOwner } from '../kube/pod-security.js';

export type { JobOwner } from '../kube/pod-security.js';

export interface PassJobSettings {
  /**
   * Hyperspool's image: the agent of every pass runs it, and so does the script unless the
   * Workflow names an image of its own (bash, python3, node, the native client and the SDKs).
   */
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
  /** Variables every script gets before its Workflow's own: the operator's OTEL_* (docs/tracing.md). */
  scriptEnv?: V1EnvVar[];
}

/** Where the pass's sockets and script live inside the pod: an emptyDir both containers mount. */
const SPOOL_DIR = '/spool';
/**
 * Where the static native client reaches the script container, whatever its image: the agent
 * copies it from the runner image into this emptyDir before the script container starts (a
 * sidecar's postStart hook holds back the containers after it).
 */
const CLIENT_DIR = `${SPOOL_DIR}/bin`;

/** One pass of a run as a Job, `<Run name>-p<N>`, its run and pass in its labels and its agent's env. */
export function buildPassJob(run: RunRecord, owner: JobOwner, settings: PassJobSettings): V1Job {
  const labels = {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.run]: runKey(run.id),
    [LABELS.pass]: String(run.passes),
    [LABELS.workflow]: workflowOf(run).name,
  };
  const agentEnv = [
    { name: 'SPOOL_RUN_ID', value: run.id },
    { name: 'SPOOL_PASS', value: String(run.passes) },
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: passJobName(owner.name, run.passes), namespace: run.project, labels, ownerReferences: ownedByRun(owner) },
    spec: passJobSpec(podSettingsOf(run), labels, settings, { flags: [], env: agentEnv }),
  };
}

/** The Workflow whose pool a warm pod is in, and the pod settings (definitionKey) it serves. */
export interface WarmPool {
  namespace: string;
  workflow: string;
  /** The Workflow's uid: its pool's Jobs are owned by it, and go with it. */
  workflowUid: string;
  definition: string;
}

/**
 * A warm pass pod's Job (spec.warmPods): the pod a pass of that definition would get, made ahead
 * with no run's identity. Its agent (`--warm`) waits for the operator to assign it one pass of one
 * run, which relabels the pod (and this Job) with that run and pass; from then on it is that pass's
 * Job like any other, and ends with the pass.
 */
export function buildWarmJob(pool: WarmPool, pod: PodSettings, settings: PassJobSettings): V1Job {
  const labels = {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.workflow]: pool.workflow,
    [LABELS.warm]: WARM.idle,
    [LABELS.definition]: pool.definition,
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      // generateName's 5 characters on top still fit a pod's job-name label.
      generateName: `${pool.workflow.slice(0, 63 - WARM_SUFFIX.length - 5).replace(/[-.]+$/, '')}${WARM_SUFFIX}`,
      namespace: pool.namespace,
      labels,
      // No blockOwnerDeletion: that would need update on workflows/finalizers, which the operator does not have.
      ownerReferences: [{ apiVersion: API_VERSION, kind: WORKFLOW.kind, name: pool.workflow, uid: pool.workflowUid, controller: true }],
    },
    spec: passJobSpec(pod, labels, settings, { flags: ['--warm'], env: [] }),
  };
}

const WARM_SUFFIX = '-warm-';

/**
 * The Job spec of a pass's pod: the script container runs `spool pass`, which asks the agent for the
 * script and runs it; the agent is a native sidecar (an init container that keeps running) serving
 * the spool socket on a shared emptyDir, and the script starts only once the socket is there.
 * The Job never retries its pod: a lost pass is dispatched again by the operator as a new pass.
 */
function passJobSpec(pod: PodSettings, labels: Record<string, string>, settings: PassJobSettings, agent: { flags: string[]; env: V1EnvVar[] }): V1JobSpec {
  const template = pod.template ?? {};
  const socket = `${SPOOL_DIR}/agent.sock`;
  const control = `${SPOOL_DIR}/control.sock`;
  const shared = [{ name: 'spool', mountPath: SPOOL_DIR }];
  return {
    backoffLimit: 0,
    ttlSecondsAfterFinished: settings.ttlSecondsAfterFinished,
    template: {
      metadata: { labels },
      spec: {
        restartPolicy: 'Never',
        serviceAccountName: pod.serviceAccountName ?? 'default',
        // The only credential in the pod is the agent's audience-bound token (TOKEN_VOLUME).
        automountServiceAccountToken: false,
        securityContext: RESTRICTED_POD,
        enableServiceLinks: false,
        ...podPlacement(template),
        initContainers: [
          {
            name: 'agent',
            image: settings.runnerImage,
            imagePullPolicy: 'IfNotPresent',
            restartPolicy: 'Always',
            command: ['spool', 'agent', '--socket', socket, '--control', control, ...agent.flags],
            // The kubelet starts the script container only once this has run.
            lifecycle: { postStart: { exec: { command: ['cp', RUNNER_CLIENT, `${CLIENT_DIR}/spool`] } } },
            env: [
              { name: 'SPOOL_SERVER', value: settings.serverUrl },
              ...agent.env,
              { name: 'SPOOL_TOKEN_FILE', value: `${TOKEN_DIR}/token` },
              // The runner image's NODE_OPTIONS loads the TypeScript SDK's resolve hook for
              // scripts; in the agent it only cost a loader thread on every cold pass's path.
              { name: 'NODE_OPTIONS', value: '' },
            ],
            volumeMounts: [...shared, { name: 'client', mountPath: CLIENT_DIR }, { name: 'token', mountPath: TOKEN_DIR, readOnly: true }],
            securityContext: RESTRICTED_CONTAINER,
          },
        ],
        containers: [
          {
            name: 'script',
            image: pod.image ?? settings.runnerImage,
            imagePullPolicy: 'IfNotPresent',
            // The static client runs in any image; it puts its own directory first on the script's PATH.
            command: [`${CLIENT_DIR}/spool`, 'pass', '--socket', socket, '--control', control, '--workdir', `${SPOOL_DIR}/work`],
            workingDir: SPOOL_DIR,
            // The Workflow's own variables last: a name given twice takes its last value.
            env: [...(settings.scriptEnv ?? []), ...((pod.env ?? []) as V1EnvVar[])],
            ...(pod.envFrom?.length ? { envFrom: pod.envFrom } : {}),
            ...(template.resources ? { resources: template.resources as V1ResourceRequirements } : {}),
            volumeMounts: [...shared, { name: 'client', mountPath: CLIENT_DIR, readOnly: true }, ...(template.volumeMounts ?? [])],
            securityContext: RESTRICTED_CONTAINER,
          },
        ],
        volumes: [{ name: 'spool', emptyDir: {} }, { name: 'client', emptyDir: {} }, TOKEN_VOLUME, ...((template.volumes ?? []) as V1Volume[])],
      },
    },
  };
}

/** Where the pass's pod may run and how it is treated: the Workflow's template, as a pod spec has it. */
function podPlacement(template: Template): Partial<V1PodSpec> {
  return {
    ...(template.nodeSelector ? { nodeSelector: template.nodeSelector } : {}),
    ...(template.tolerations?.length ? { tolerations: template.tolerations } : {}),
    ...(template.affinity ? { affinity: template.affinity } : {}),
    ...(template.imagePullSecrets?.length ? { imagePullSecrets: template.imagePullSecrets } : {}),
    ...(template.priorityClassName ? { priorityClassName: template.priorityClassName } : {}),
    ...(template.activeDeadlineSeconds ? { activeDeadlineSeconds: template.activeDeadlineSeconds } : {}),
  };
}
