import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** What keeps a pass's pod from starting its script, as the kubelet and the scheduler report it. */
export interface PodTrouble {
  /**
   * The kubelet's or scheduler's word for it: ImagePullBackOff, CreateContainerConfigError,
   * Unschedulable... (ErrImagePull is ImagePullBackOff: the kubelet alternates the two).
   */
  reason: string;
  /** One short line that stays the same while the trouble does: a Run's message, and its Events. */
  summary: string;
  /** The kubelet's or scheduler's whole word on it (a registry's answer, say): the PodReady condition. */
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

/** Reasons about the image: the summary names it. */
const IMAGE_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

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
    const reason = stuck.reason === 'ErrImagePull' ? 'ImagePullBackOff' : stuck.reason;
    const grace = GRACE[reason];
    const image = IMAGE_REASONS.has(reason) ? imageOf(pod, stuck.container) : null;
    const summary = `the ${stuck.container} container cannot start: ${reason}${image ? ` (image "${image}")` : ''}`;
    return {
      reason,
      summary,
      message: `the ${stuck.container} container cannot start: ${stuck.reason}${stuck.message ? `: ${stuck.message}` : ''}`,
      fatal: HOPELESS.has(reason) || (grace !== undefined && troubledFor(reason) >= grace),
    };
  }
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    const summary = 'no node can run the pod';
    return { reason: 'Unschedulable', summary, message: `${summary}: ${scheduled.message ?? ''}`.trimEnd(), fatal: false };
  }
  return null;
}

function imageOf(pod: V1Pod, container: string): string | null {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((each) => each.name === container)?.image ?? null;
}
