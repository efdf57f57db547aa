import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** What keeps a pass's pod from starting its script, as the kubelet and the scheduler report it. */
export interface PodTrouble {
  /** The kubelet's or scheduler's word for it: ImagePullBackOff, CreateContainerConfigError, Unschedulable... */
  reason: string;
  message: string;
  /** It cannot heal by waiting: the pass (and so the run) fails at once, saying why. */
  fatal: boolean;
}

/** Waiting reasons no retry can mend: the pod's spec itself is wrong. */
const HOPELESS = new Set(['InvalidImageName', 'ErrImageNeverPull']);
/**
 * Reasons that may heal (a Secret or ConfigMap created a moment later), but rarely do: after this
 * long they are taken as final.
 */
const GRACE: Record<string, number> = { CreateContainerConfigError: 30_000, CreateContainerError: 30_000 };

function waiting(statuses: V1ContainerStatus[] | undefined): { container: string; reason: string; message: string } | null {
  for (const status of statuses ?? []) {
    const reason = status.state?.waiting?.reason;
    // ContainerCreating and PodInitializing are a pod starting as it should.
    if (reason && reason !== 'ContainerCreating' && reason !== 'PodInitializing') {
      return { container: status.name, reason, message: status.state?.waiting?.message ?? '' };
    }
  }
  return null;
}

/**
 * Why this pod is stuck, if it is: a container the kubelet cannot start (an image it cannot pull, a
 * Secret it cannot find), or a pod the scheduler cannot place. `troubledFor` is how long the same
 * reason has been seen, for the reasons that get a grace period.
 */
export function podTrouble(pod: V1Pod, troubledFor: (reason: string) => number): PodTrouble | null {
  const stuck = waiting(pod.status?.initContainerStatuses) ?? waiting(pod.status?.containerStatuses);
  if (stuck) {
    const grace = GRACE[stuck.reason];
    return {
      reason: stuck.reason,
      message: `the ${stuck.container} container cannot start: ${stuck.reason}${stuck.message ? `: ${stuck.message}` : ''}`,
      fatal: HOPELESS.has(stuck.reason) || (grace !== undefined && troubledFor(stuck.reason) >= grace),
    };
  }
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return { reason: 'Unschedulable', message: `no node can run the pod: ${scheduled.message ?? ''}`.trimEnd(), fatal: false };
  }
  return null;
}
